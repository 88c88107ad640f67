def check_instruction(response):
    import re
    m = re.search(r"```.*?\n(.*?)```", response, re.DOTALL)
    code = m.group(1) if m else response
    assert "public class Solution {" in code, "the class must be declared as 'public class Solution {'"
    assert not re.search(r"\b(for|while)\s*\(", code), "for/while loops are not allowed"
    assert "String.join" in code, "String.join must be used"
    names = re.findall(r"\b(?:public|private|protected|static)\s+(?:static\s+)?[\w<>\[\], ]+?\s+(\w+)\s*\(", code)
    assert names, "no method found"
    for n in names:
        assert re.fullmatch(r"[a-z][a-zA-Z0-9]*", n), "method names must be camelCase: " + n
