def check_instruction(response):
    import re
    m = re.search(r"```.*?\n(.*?)```", response, re.DOTALL)
    code = m.group(1) if m else response
    assert re.search(r"\bclass\s+LRUCache\b", code), "class LRUCache is required"
    assert "new Map(" in code, "entries must be stored in a Map"
    assert not re.search(r"\bvar\b", code), "var is not allowed"
    lines = code.splitlines()
    methods = 0
    for i, line in enumerate(lines):
        mm = re.match(r"^\s+([A-Za-z_$][\w$]*)\s*\([^)]*\)\s*\{\s*$", line)
        if not mm or mm.group(1) in ("if", "for", "while", "switch", "catch", "function"):
            continue
        methods += 1
        name = mm.group(1)
        assert re.fullmatch(r"[a-z][a-zA-Z0-9]*", name), "method names must be camelCase: " + name
        prev = [l for l in lines[:i] if l.strip()]
        assert prev and prev[-1].strip().endswith("*/"), "missing JSDoc before " + name
    assert methods >= 3, "constructor, get and put are required"
