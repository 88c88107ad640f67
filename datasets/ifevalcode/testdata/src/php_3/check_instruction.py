def check_instruction(response):
    import re
    m = re.search(r"```.*?\n(.*?)```", response, re.DOTALL)
    code = m.group(1) if m else response
    assert re.match(r"\s*(<\?php\s*)?declare\s*\(\s*strict_types\s*=\s*1\s*\)\s*;", code), "declare(strict_types=1); must come first"
    methods = re.findall(r"public\s+static\s+function\s+(\w+)\s*\(\s*float\s+\$\w+\s*\)\s*:\s*float\b", code)
    assert len(methods) == 2, "two public static typed methods are required"
    for n in methods:
        assert re.fullmatch(r"[a-z][a-zA-Z0-9]*", n), "method names must be camelCase: " + n
    assert re.search(r"\bconst\s+OFFSET\s*=\s*32\s*;", code), "class constant OFFSET = 32 is required"
    assert "self::OFFSET" in code, "OFFSET must be used through self::OFFSET"
