def check_instruction(response):
    import re
    m = re.search(r"```.*?\n(.*?)```", response, re.DOTALL)
    code = m.group(1) if m else response
    assert re.search(r"\.replace\(\s*/", code), "replace must be called with a regular expression literal"
    assert not re.search(r"\b(for|while)\s*\(|\bdo\s*\{", code), "loops are not allowed"
    comments = re.findall(r"//(.*)", code) + re.findall(r"/\*(.*?)\*/", code, re.DOTALL)
    assert comments, "at least one comment is required"
    for c in comments:
        assert re.search(r"[\u4e00-\u9fff]", c), "comments must be written in Chinese: " + c
    assert not re.search(r"\b(let|var)\b", code), "only const is allowed"
