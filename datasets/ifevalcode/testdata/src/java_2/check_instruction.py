def check_instruction(response):
    import re
    m = re.search(r"```.*?\n(.*?)```", response, re.DOTALL)
    code = m.group(1) if m else response
    assert "ArrayDeque" in code, "java.util.ArrayDeque must be used"
    assert not re.search(r"\bStack\s*<|java\.util\.Stack\b|new\s+Stack\b", code), "java.util.Stack is not allowed"
    lines = code.splitlines()
    for line in lines:
        if re.match(r"^    [^ /*@}].*;\s*$", line):
            assert line.startswith("    private final "), "fields must be private final: " + line.strip()
    for i, line in enumerate(lines):
        if re.match(r"^    public\s+(?!class\b)", line):
            prev = [l for l in lines[:i] if l.strip()]
            assert prev and prev[-1].strip().endswith("*/"), "public method without Javadoc: " + line.strip()
    assert not re.search(r"static\s+void\s+main\s*\(", code), "a main method is not allowed"
