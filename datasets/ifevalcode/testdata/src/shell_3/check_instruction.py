def check_instruction(response):
    import re
    m = re.search(r"```.*?\n(.*?)```", response, re.DOTALL)
    code = m.group(1) if m else response
    assert "((" in code, "(( )) arithmetic must be used"
    assert not re.search(r"\[\[|\[\s|\btest\b", code), "[ ], [[ ]] and test are not allowed"
    assert re.search(r"\breturn\b", code), "return must be used"
    assert not re.search(r"\bexit\b", code), "exit is not allowed"
    comments = re.findall(r"(?m)(?:^|\s)#(?!!)(.*)", code)
    assert comments, "at least one comment is required"
    for c in comments:
        assert re.search(r"[\u4e00-\u9fff]", c), "comments must be written in Chinese: " + c
