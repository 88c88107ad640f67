function check_correctness(): void {
    const assert = require("assert");
    assert.strictEqual(camelToKebab("backgroundColor"), "background-color");
    assert.strictEqual(camelToKebab("XMLHttp"), "x-m-l-http");
    assert.strictEqual(camelToKebab("simple"), "simple");
    assert.strictEqual(camelToKebab(""), "");
    assert.strictEqual(camelToKebab("aB1C"), "a-b1-c");
}
