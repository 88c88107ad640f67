def sum_of_squares(n):
    if n <= 0:
        return 0
    return n * n + sum_of_squares(n - 1)
