using System;
using System.Linq;

public static class StringTools
{
    /// <summary>Capitalizes every space-separated word.</summary>
    public static string Capitalize(string s)
    {
        return string.Join(" ", s.Split(' ').Select(w => w.Length == 0 ? w : char.ToUpper(w[0]) + w.Substring(1).ToLower()));
    }
}
