using System;
using System.Linq;
using System.Text;

public static class StringTools
{
    public static string Capitalize(string s)
    {
        var parts = s.Split(' ');
        for (int i = 0; i < parts.Length; i++)
        {
            if (parts[i].Length > 0) parts[i] = char.ToUpper(parts[i][0]) + parts[i].Substring(1).ToLower();
        }
        return string.Join(" ", parts);
    }
}
