function check_correctness() {
    if (sum_even([1, 2, 3, 4, 5, 6]) !== 12) { throw new Exception("sum_even([1, 2, 3, 4, 5, 6]) must be 12"); }
    if (sum_even([]) !== 0) { throw new Exception("sum_even([]) must be 0"); }
    if (sum_even([-2, -3, 7]) !== -2) { throw new Exception("negative even numbers count"); }
    if (sum_even([1, 3, 5]) !== 0) { throw new Exception("sum_even([1, 3, 5]) must be 0"); }
}
