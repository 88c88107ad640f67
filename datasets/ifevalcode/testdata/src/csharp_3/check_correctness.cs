public class CheckCorrectness
{
    public static bool check_correctness()
    {
        if (MathUtil.Factorial(0) != 1) return false;
        if (MathUtil.Factorial(1) != 1) return false;
        if (MathUtil.Factorial(5) != 120) return false;
        if (MathUtil.Factorial(20) != 2432902008176640000L) return false;
        try { MathUtil.Factorial(-1); return false; } catch (ArgumentOutOfRangeException) { }
        return true;
    }
}
