def check_instruction(response):
    import re
    m = re.search(r"```.*?\n(.*?)```", response, re.DOTALL)
    code = m.group(1) if m else response
    assert "array_filter" in code and "array_sum" in code, "array_filter and array_sum must be used"
    assert not re.search(r"\b(for|foreach|while)\s*\(", code), "loops are not allowed"
    assert re.search(r"function\s+sum_even\s*\(\s*array\s+\$\w+\s*\)\s*:\s*int\b", code), "parameter and return types are required"
    assert re.search(r"\bfn\s*\(", code), "an arrow function must be used"
