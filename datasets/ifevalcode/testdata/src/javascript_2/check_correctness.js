function check_correctness() {
    const assert = require("assert");
    assert.deepStrictEqual(groupBy([1, 2, 3, 4, 5], (n) => (n % 2 ? "odd" : "even")), { odd: [1, 3, 5], even: [2, 4] });
    assert.deepStrictEqual(groupBy([], (x) => x), {});
    assert.deepStrictEqual(groupBy(["apple", "avocado", "banana"], (s) => s[0]), { a: ["apple", "avocado"], b: ["banana"] });
}
