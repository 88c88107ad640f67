def check_instruction(response):
    import re
    m = re.search(r"```.*?\n(.*?)```", response, re.DOTALL)
    code = m.group(1) if m else response
    assert re.search(r"\bfunction\s+flatten\s*\(", code), "flatten must be declared with the function keyword"
    assert len(re.findall(r"\bflatten\s*\(", code)) >= 2, "flatten must be recursive"
    assert not re.search(r"\.flat(Map)?\s*\(", code), "flat/flatMap are not allowed"
    assert ".reduce(" in code, "reduce must be used"
    assert not re.search(r"\bvar\b", code), "var is not allowed"
