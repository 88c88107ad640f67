function chunk<T>(items: T[], size: number): T[][] {
    if (size < 1) {
        throw new RangeError("size must be at least 1");
    }
    return Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, size));
}
