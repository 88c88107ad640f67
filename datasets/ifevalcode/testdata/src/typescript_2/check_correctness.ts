function check_correctness(): void {
    const assert = require("assert");
    const origin: Point = { x: 0, y: 0 };
    assert.strictEqual(manhattan(origin, { x: 3, y: 4 }), 7);
    assert.strictEqual(manhattan({ x: -1, y: -1 }, { x: 1, y: 1 }), 4);
    assert.strictEqual(manhattan({ x: 2.5, y: 0 }, { x: 0, y: 0 }), 2.5);
    assert.strictEqual(manhattan(origin, origin), 0);
}
