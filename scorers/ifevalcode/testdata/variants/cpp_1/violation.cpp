// Recursive, with an English comment.
long long fibonacci(int n) {
    static long long memo[91] = {0};
    if (n < 2) return n;
    if (memo[n] != 0) return memo[n];
    return memo[n] = fibonacci(n - 1) + fibonacci(n - 2);
}
