long long fibonacci(int n) {
    // 没有定义的变量
    return undefined_value + n;
}
