def check_correctness():
    assert sum_of_squares(0) == 0
    assert sum_of_squares(1) == 1
    assert sum_of_squares(3) == 14
    assert sum_of_squares(10) == 385
    assert sum_of_squares(50) == 42925
