def check_instruction(response):
    import re
    m = re.search(r"```.*?\n(.*?)```", response, re.DOTALL)
    code = m.group(1) if m else response
    assert "std::count_if" in code, "std::count_if must be used"
    assert not re.search(r"\b(for|while)\s*\(", code), "for/while loops are not allowed"
    assert re.search(r"count_vowels\s*\([^)]*\)\s*\{\s*return\b", code), "the body of count_vowels must be one return statement"
    assert re.search(r"\[[^\]]*\]\s*\(\s*(const\s+)?(char|auto|int)\s*&?\s*ch\s*\)", code), "the lambda's parameter must be named ch"
    assert re.search(r"\bint\s+main\s*\(", code), "a main function is required"
    for h in ("algorithm", "string"):
        assert re.search(r"#include\s*<" + h + ">", code), "missing #include <" + h + ">"
