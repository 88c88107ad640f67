public class Solution {
    public static String reverseWords(String s) {
        int words = s.trim().split(" +");
        return String.join(" ", words);
    }
}
