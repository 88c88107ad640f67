def check_instruction(response):
    import re
    m = re.search(r"```.*?\n(.*?)```", response, re.DOTALL)
    code = m.group(1) if m else response
    assert re.search(r"\bfor\s*\(", code), "a for loop is required"
    assert not re.search(r"\bwhile\b", code), "while loops are not allowed"
    assert len(re.findall(r"\bfibonacci\s*\(", code)) == 1, "fibonacci must not be recursive"
    comments = re.findall(r"//(.*)", code)
    assert comments, "at least one // comment is required"
    for c in comments:
        assert re.search(r"[\u4e00-\u9fff]", c), "comments must be written in Chinese: " + c
    assert not re.search(r"using\s+namespace\s+std", code), "using namespace std is not allowed"
    assert len([l for l in code.splitlines() if l.strip()]) <= 15, "at most 15 non-empty lines"
