using System;

public static class MathUtil
{
    public static long Factorial(int n) =>
        n < 0 ? throw new ArgumentOutOfRangeException(nameof(n)) : n <= 1 ? 1L : n * Factorial(n - 1);
}
