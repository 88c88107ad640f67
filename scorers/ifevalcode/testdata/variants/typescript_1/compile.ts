function chunk<T>(items: T[], size: number): T[][] {
    const groups: number = Array.from({ length: 1 }, () => items);
    return groups;
}
