def check_instruction(response):
    import re
    m = re.search(r"```.*?\n(.*?)```", response, re.DOTALL)
    code = m.group(1) if m else response
    assert "preg_replace" in code, "preg_replace must be used"
    fm = re.search(r"function\s+slugify\s*\([^)]*\)[^{]*\{(.*)\}", code, re.DOTALL)
    assert fm, "slugify not found"
    body = re.sub(r"//[^\n]*|/\*.*?\*/", "", fm.group(1), flags=re.DOTALL)
    assert body.count(";") <= 3, "at most 3 statements"
    comments = re.findall(r"//(.*)", code) + re.findall(r"/\*(.*?)\*/", code, re.DOTALL) + re.findall(r"(?m)^\s*#(?!\[)(.*)", code)
    assert comments, "at least one comment is required"
    for c in comments:
        assert re.search(r"[\u4e00-\u9fff]", c), "comments must be written in Chinese: " + c
