sum_args() {
    total=0
    for n in "$@"; do
        total=$(expr "$total" + "$n")
    done
    echo "$total"
}
