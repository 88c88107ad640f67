def check_instruction(response):
    import ast
    import re
    m = re.search(r"```.*?\n(.*?)```", response, re.DOTALL)
    code = m.group(1) if m else response
    tree = ast.parse(code)
    funcs = [f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) and f.name == "is_palindrome"]
    assert funcs, "function is_palindrome is not defined"
    f = funcs[0]
    assert ast.get_docstring(f) is not None, "a docstring is required"
    body = f.body[1:]
    assert len(body) == 1 and isinstance(body[0], ast.Return), "the body must be a single return statement"
    assert "isalnum" in code, "str.isalnum must be used"
    assert f.returns is not None, "the return type must be annotated"
    assert all(a.annotation is not None for a in f.args.args), "parameters must be annotated"
