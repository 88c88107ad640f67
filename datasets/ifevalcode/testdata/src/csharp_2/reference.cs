using System;

public class BankAccount
{
    /// <summary>The current balance.</summary>
    public decimal Balance { get; private set; }

    /// <summary>Opens an account with the given balance.</summary>
    public BankAccount(decimal initialBalance)
    {
        Balance = initialBalance;
    }

    /// <summary>Adds a positive amount.</summary>
    public void Deposit(decimal amount)
    {
        if (amount <= 0) throw new ArgumentException("amount must be positive", nameof(amount));
        Balance += amount;
    }

    /// <summary>Removes a positive amount that is not above the balance.</summary>
    public void Withdraw(decimal amount)
    {
        if (amount <= 0) throw new ArgumentException("amount must be positive", nameof(amount));
        if (amount > Balance) throw new InvalidOperationException("insufficient funds");
        Balance -= amount;
    }
}
