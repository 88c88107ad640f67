def check_instruction(response):
    import re
    m = re.search(r"```.*?\n(.*?)```", response, re.DOTALL)
    code = m.group(1) if m else response
    assert "std::merge" in code, "std::merge must be used"
    assert not re.search(r"\b(for|while|do)\b", code), "loops are not allowed"
    for h in ("vector", "algorithm", "iterator"):
        assert re.search(r"#include\s*<" + h + ">", code), "missing #include <" + h + ">"
    assert not re.search(r"using\s+namespace\s+std", code), "using namespace std is not allowed"
    assert ".reserve(" in code, "reserve must be called"
