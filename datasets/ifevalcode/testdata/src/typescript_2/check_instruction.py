def check_instruction(response):
    import re
    m = re.search(r"```.*?\n(.*?)```", response, re.DOTALL)
    code = m.group(1) if m else response
    assert re.search(r"\binterface\s+Point\b", code), "Point must be an interface"
    assert not re.search(r"\btype\s+Point\b", code), "Point must not be a type alias"
    assert re.search(r"\bconst\s+manhattan\s*=\s*\(\s*\w+\s*:\s*Point\s*,\s*\w+\s*:\s*Point\s*\)\s*:\s*number\s*=>", code), "manhattan must be a typed arrow function assigned to a const"
    assert "Math.abs" in code, "Math.abs must be used"
    assert len([l for l in code.splitlines() if l.strip()]) <= 6, "at most 6 non-empty lines"
    assert not re.search(r"^\s*(import|export)\b", code, re.M), "import/export are not allowed"
