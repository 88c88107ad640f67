public class CheckCorrectness
{
    public static bool check_correctness()
    {
        var acct = new BankAccount(100m);
        acct.Deposit(50m);
        if (acct.Balance != 150m) return false;
        acct.Withdraw(30m);
        if (acct.Balance != 120m) return false;
        try { acct.Withdraw(500m); return false; } catch (InvalidOperationException) { }
        if (acct.Balance != 120m) return false;
        try { acct.Deposit(0m); return false; } catch (ArgumentException) { }
        try { acct.Withdraw(-1m); return false; } catch (ArgumentException) { }
        if (acct.Balance != 120m) return false;
        return true;
    }
}
