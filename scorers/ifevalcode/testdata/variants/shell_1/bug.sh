sum_args() {
    local total=0
    local n
    for n in "$@"; do
        total=$((n))
    done
    echo "$total"
}
