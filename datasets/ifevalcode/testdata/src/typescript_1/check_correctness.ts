function check_correctness(): void {
    const assert = require("assert");
    assert.deepStrictEqual(chunk([1, 2, 3, 4, 5], 2), [[1, 2], [3, 4], [5]]);
    assert.deepStrictEqual(chunk(["a", "b", "c"], 3), [["a", "b", "c"]]);
    assert.deepStrictEqual(chunk([], 4), []);
    assert.deepStrictEqual(chunk([1, 2, 3], 5), [[1, 2, 3]]);
    assert.throws(() => chunk([1], 0), RangeError);
}
