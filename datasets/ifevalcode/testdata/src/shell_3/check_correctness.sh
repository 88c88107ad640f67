check_correctness() {
    local p
    for p in 2 3 5 7 11 13 97 7919; do
        is_prime "$p" || { echo "$p is prime" >&2; exit 1; }
    done
    for p in 0 1 4 9 15 100 7917; do
        if is_prime "$p"; then echo "$p is not prime" >&2; exit 1; fi
    done
    [[ -z "$(is_prime 7)" ]] || { echo "is_prime must print nothing" >&2; exit 1; }
}
