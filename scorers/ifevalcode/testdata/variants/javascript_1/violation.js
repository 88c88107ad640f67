function flatten(arr) {
    return arr.flat(Infinity);
}
