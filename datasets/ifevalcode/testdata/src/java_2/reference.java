import java.util.ArrayDeque;
import java.util.Deque;

public class MinStack {
    private final Deque<Integer> values = new ArrayDeque<>();
    private final Deque<Integer> mins = new ArrayDeque<>();

    /** Pushes x onto the stack. */
    public void push(int x) {
        values.push(x);
        if (mins.isEmpty() || x <= mins.peek()) {
            mins.push(x);
        }
    }

    /** Removes and returns the top element. */
    public int pop() {
        if (values.isEmpty()) {
            throw new IllegalStateException("empty stack");
        }
        int x = values.pop();
        if (x == mins.peek()) {
            mins.pop();
        }
        return x;
    }

    /** Returns the top element. */
    public int top() {
        if (values.isEmpty()) {
            throw new IllegalStateException("empty stack");
        }
        return values.peek();
    }

    /** Returns the smallest element. */
    public int getMin() {
        if (mins.isEmpty()) {
            throw new IllegalStateException("empty stack");
        }
        return mins.peek();
    }
}
