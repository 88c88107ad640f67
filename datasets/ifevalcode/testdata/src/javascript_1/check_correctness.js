function check_correctness() {
    const assert = require("assert");
    assert.deepStrictEqual(flatten([1, [2, [3, [4]]], 5]), [1, 2, 3, 4, 5]);
    assert.deepStrictEqual(flatten([]), []);
    assert.deepStrictEqual(flatten([[[]]]), []);
    assert.deepStrictEqual(flatten(["a", ["b"], [["c", ["d"]]]]), ["a", "b", "c", "d"]);
    const input = [1, [2]];
    flatten(input);
    assert.deepStrictEqual(input, [1, [2]], "the input must not be modified");
}
