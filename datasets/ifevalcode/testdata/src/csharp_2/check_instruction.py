def check_instruction(response):
    import re
    m = re.search(r"```.*?\n(.*?)```", response, re.DOTALL)
    code = m.group(1) if m else response
    assert re.search(r"public\s+decimal\s+Balance\s*\{\s*get;\s*private\s+set;\s*\}", code), "Balance must be { get; private set; }"
    lines = code.splitlines()
    for i, line in enumerate(lines):
        if re.match(r"^\s+public\s+", line):
            prev = [l for l in lines[:i] if l.strip()]
            assert prev and prev[-1].strip().startswith("///"), "missing XML doc comment before: " + line.strip()
    assert "nameof(amount)" in code, "nameof(amount) must be used"
    assert "Console" not in code, "Console is not allowed"
