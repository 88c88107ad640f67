class TestCases {
    public static void checkCorrectness() {
        int[][] cases = {{12, 18, 6}, {17, 5, 1}, {0, 7, 7}, {7, 0, 7}, {0, 0, 0}, {1071, 462, 21}};
        for (int[] c : cases) {
            int got = Solution.gcd(c[0], c[1]);
            if (got != c[2]) {
                throw new AssertionError("gcd(" + c[0] + ", " + c[1] + ") = " + got + ", want " + c[2]);
            }
        }
    }
}
