using System;
using System.Linq;

public static class StringTools
{
    /// <summary>Uses a C# 8 switch expression, which mcs (C# 7.2) rejects.</summary>
    public static string Capitalize(string s) => s.Length switch
    {
        0 => s,
        _ => string.Join(" ", s.Split(' ').Select(w => w.Length == 0 ? w : char.ToUpper(w[0]) + w.Substring(1).ToLower())),
    };
}
