def check_instruction(response):
    import re
    m = re.search(r"```.*?\n(.*?)```", response, re.DOTALL)
    code = m.group(1) if m else response
    assert re.search(r"Factorial\s*\(\s*int\s+\w+\s*\)\s*=>", code), "Factorial must be expression-bodied"
    assert len(re.findall(r"\bFactorial\s*\(", code)) >= 2, "Factorial must be recursive"
    assert not re.search(r"\b(for|foreach|while)\s*\(|\bdo\s*\{", code), "loops are not allowed"
    assert len([l for l in code.splitlines() if l.strip()]) <= 10, "at most 10 non-empty lines"
