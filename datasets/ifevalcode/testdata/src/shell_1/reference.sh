sum_args() {
    local total=0
    local n
    for n in "$@"; do
        total=$((total + n))
    done
    echo "$total"
}
