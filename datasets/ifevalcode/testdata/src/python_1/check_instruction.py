def check_instruction(response):
    import ast
    import re
    m = re.search(r"```.*?\n(.*?)```", response, re.DOTALL)
    code = m.group(1) if m else response
    tree = ast.parse(code)
    funcs = {f.name: f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef)}
    assert "sum_of_squares" in funcs, "function sum_of_squares is not defined"
    calls = [c.func.id for c in ast.walk(tree) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)]
    inner = [c.func.id for c in ast.walk(funcs["sum_of_squares"]) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)]
    assert "sum_of_squares" in inner, "sum_of_squares must call itself"
    assert not any(isinstance(n, (ast.For, ast.While)) for n in ast.walk(tree)), "for/while loops are not allowed"
    assert "sum" not in calls, "sum() is not allowed"
    lines = [l for l in code.splitlines() if l.strip()]
    assert len(lines) <= 6, "at most 6 non-empty lines"
    for l in lines:
        lead = l[:len(l) - len(l.lstrip())]
        assert "\t" not in lead, "tabs are not allowed"
        assert len(lead) % 4 == 0, "indent with 4 spaces"
