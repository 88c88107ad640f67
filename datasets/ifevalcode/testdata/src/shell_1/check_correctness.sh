check_correctness() {
    [[ "$(sum_args 1 2 3)" == "6" ]] || { echo "sum_args 1 2 3 must print 6" >&2; exit 1; }
    [[ "$(sum_args)" == "0" ]] || { echo "sum_args without arguments must print 0" >&2; exit 1; }
    [[ "$(sum_args -5 10)" == "5" ]] || { echo "sum_args -5 10 must print 5" >&2; exit 1; }
    [[ "$(sum_args 100)" == "100" ]] || { echo "sum_args 100 must print 100" >&2; exit 1; }
}
