def check_instruction(response):
    import re
    m = re.search(r"```.*?\n(.*?)```", response, re.DOTALL)
    code = m.group(1) if m else response
    assert "using System.Linq;" in code, "LINQ must be used"
    assert not re.search(r"\b(for|foreach|while)\s*\(", code), "loops are not allowed"
    names = re.findall(r"\bclass\s+(\w+)", code)
    names += re.findall(r"\b(?:public|private|internal|protected)\s+(?:static\s+)?[\w<>\[\]]+\s+(\w+)\s*\(", code)
    assert names, "no class or method found"
    for n in names:
        assert re.fullmatch(r"[A-Z][A-Za-z0-9]*", n), "names must be PascalCase: " + n
    assert re.search(r"///[^\n]*\n\s*public\s+static\s+string\s+Capitalize\s*\(", code), "an XML doc comment must precede the method"
