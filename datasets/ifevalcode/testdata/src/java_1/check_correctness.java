class TestCases {
    public static void checkCorrectness() {
        assertEq(Solution.reverseWords("the sky is blue"), "blue is sky the");
        assertEq(Solution.reverseWords("  hello world  "), "world hello");
        assertEq(Solution.reverseWords("a good   example"), "example good a");
        assertEq(Solution.reverseWords("single"), "single");
        assertEq(Solution.reverseWords("   "), "");
    }

    private static void assertEq(String got, String want) {
        if (!got.equals(want)) {
            throw new AssertionError("got [" + got + "], want [" + want + "]");
        }
    }
}
