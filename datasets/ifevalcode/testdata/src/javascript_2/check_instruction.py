def check_instruction(response):
    import re
    m = re.search(r"```.*?\n(.*?)```", response, re.DOTALL)
    code = m.group(1) if m else response
    assert ".reduce(" in code, "reduce must be used"
    assert not re.search(r"\b(for|while)\s*\(|\.forEach\s*\(", code), "loops and forEach are not allowed"
    assert not re.search(r"\bfunction\b", code), "the function keyword is not allowed"
    assert "=>" in code, "arrow functions must be used"
    assert not re.search(r"\b(let|var)\b", code), "only const is allowed"
