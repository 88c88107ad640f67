function check_correctness() {
    const assert = require("assert");
    const cache = new LRUCache(2);
    cache.put(1, 1);
    cache.put(2, 2);
    assert.strictEqual(cache.get(1), 1);
    cache.put(3, 3);
    assert.strictEqual(cache.get(2), -1);
    cache.put(4, 4);
    assert.strictEqual(cache.get(1), -1);
    assert.strictEqual(cache.get(3), 3);
    assert.strictEqual(cache.get(4), 4);
    cache.put(3, 30);
    assert.strictEqual(cache.get(3), 30);
}
