def check_instruction(response):
    import re
    m = re.search(r"```.*?\n(.*?)```", response, re.DOTALL)
    code = m.group(1) if m else response
    assert re.search(r"function\s+chunk\s*<\s*T\s*>\s*\(\s*\w+\s*:\s*T\[\]\s*,\s*\w+\s*:\s*number\s*\)\s*:\s*T\[\]\[\]", code), "chunk must be generic with explicit types"
    assert not re.search(r"\bany\b", code), "any is not allowed"
    assert not re.search(r"\bvar\b", code), "var is not allowed"
    assert not re.search(r"^\s*(import|export)\b", code, re.M), "import/export are not allowed"
    assert "Array.from" in code, "Array.from must be used"
