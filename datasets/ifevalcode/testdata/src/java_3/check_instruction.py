def check_instruction(response):
    import re
    m = re.search(r"```.*?\n(.*?)```", response, re.DOTALL)
    code = m.group(1) if m else response
    assert "public class Solution {" in code, "the class must be declared as 'public class Solution {'"
    assert not re.search(r"^\s*import\b", code, re.M), "imports are not allowed"
    assert not re.search(r"\b(for|while)\s*\(|\bdo\s*\{", code), "loops are not allowed"
    body = re.search(r"static\s+int\s+gcd\s*\([^)]*\)\s*\{(.*?)\n\s*\}", code, re.DOTALL)
    assert body, "gcd not found"
    stmt = body.group(1).strip()
    assert stmt.startswith("return") and stmt.count(";") == 1, "the body must be a single return statement"
    assert "?" in stmt and ":" in stmt, "the conditional operator must be used"
    assert "gcd(" in stmt, "gcd must be recursive"
