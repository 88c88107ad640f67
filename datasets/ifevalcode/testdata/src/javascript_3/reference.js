class LRUCache {
    /** @param {number} capacity the maximum number of entries */
    constructor(capacity) {
        this.capacity = capacity;
        this.map = new Map();
    }

    /** Returns the value of key, or -1, and marks key as most recently used. */
    get(key) {
        if (!this.map.has(key)) {
            return -1;
        }
        const value = this.map.get(key);
        this.map.delete(key);
        this.map.set(key, value);
        return value;
    }

    /** Inserts or updates key, evicting the least recently used entry when over capacity. */
    put(key, value) {
        this.map.delete(key);
        this.map.set(key, value);
        if (this.map.size > this.capacity) {
            this.map.delete(this.map.keys().next().value);
        }
    }
}
