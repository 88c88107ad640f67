is_prime() {
    # 小于 2 的数不是素数
    local n=$1
    local d
    (( n < 2 )) && return 1
    # 试除到平方根为止
    for ((d = 2; d * d <= n; d++)); do
        (( n % d == 0 )) && return 1
    done
    return 0
}
