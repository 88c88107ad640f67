class TestCases {
    public static void checkCorrectness() {
        MinStack s = new MinStack();
        s.push(3);
        s.push(5);
        check(s.getMin() == 3, "min after pushing 3, 5");
        s.push(2);
        s.push(2);
        check(s.getMin() == 2, "min after pushing 2, 2");
        check(s.pop() == 2, "first pop");
        check(s.getMin() == 2, "min after popping one 2");
        check(s.pop() == 2, "second pop");
        check(s.getMin() == 3, "min after popping both 2s");
        check(s.top() == 5, "top");
        s.pop();
        s.pop();
        boolean thrown = false;
        try {
            s.getMin();
        } catch (IllegalStateException e) {
            thrown = true;
        }
        check(thrown, "getMin on an empty stack must throw IllegalStateException");
    }

    private static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }
}
