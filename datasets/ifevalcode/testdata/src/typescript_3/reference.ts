function camelToKebab(name: string): string {
    // 把每个大写字母替换成连字符加小写字母，开头的大写字母前不加连字符
    return name.replace(/[A-Z]/g, (ch: string, offset: number) => (offset === 0 ? "" : "-") + ch.toLowerCase());
}
