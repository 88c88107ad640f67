def check_instruction(response):
    import ast
    import re
    m = re.search(r"```.*?\n(.*?)```", response, re.DOTALL)
    code = m.group(1) if m else response
    assert "Counter" in code, "collections.Counter must be used"
    assert re.search(r"^\s*(import re\b|from re import)", code, re.M), "the re module must be used"
    comments = re.findall(r"#(.*)", code)
    assert comments, "at least one comment is required"
    for c in comments:
        assert re.search(r"[\u4e00-\u9fff]", c), "comments must be written in Chinese: " + c
    tree = ast.parse(code)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            assert len(node.id) >= 3, "variable name too short: " + node.id
