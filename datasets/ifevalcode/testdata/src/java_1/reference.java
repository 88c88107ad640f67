import java.util.Arrays;
import java.util.Collections;
import java.util.List;

public class Solution {
    public static String reverseWords(String s) {
        String trimmed = s.trim();
        if (trimmed.isEmpty()) {
            return "";
        }
        List<String> words = Arrays.asList(trimmed.split(" +"));
        Collections.reverse(words);
        return String.join(" ", words);
    }
}
