long long fibonacci(int n) {
    // 用两个变量迭代计算斐波那契数
    long long a = 0, b = 1;
    for (int i = 1; i < n; ++i) {
        long long next = a + b;
        a = b;
        b = next;
    }
    return a;
}
