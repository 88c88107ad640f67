import java.util.Arrays;
import java.util.Collections;
import java.util.List;

public class Solution {
    public static String reverseWords(String s) {
        List<String> words = Arrays.asList(s.split(" +"));
        Collections.reverse(words);
        return String.join(" ", words);
    }
}
