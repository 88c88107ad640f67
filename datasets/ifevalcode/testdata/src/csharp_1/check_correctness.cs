public class CheckCorrectness
{
    public static bool check_correctness()
    {
        if (StringTools.Capitalize("hello WORLD") != "Hello World") return false;
        if (StringTools.Capitalize("") != "") return false;
        if (StringTools.Capitalize("a  b") != "A  B") return false;
        if (StringTools.Capitalize("mIxEd cAsE words") != "Mixed Case Words") return false;
        return true;
    }
}
