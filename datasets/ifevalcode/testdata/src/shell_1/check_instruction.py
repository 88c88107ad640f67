def check_instruction(response):
    import re
    m = re.search(r"```.*?\n(.*?)```", response, re.DOTALL)
    code = m.group(1) if m else response
    assert re.search(r"^sum_args\s*\(\)\s*\{", code, re.M), "define the function as sum_args() {"
    assert not re.search(r"\bfunction\b", code), "the function keyword is not allowed"
    local = set(re.findall(r"\blocal\s+(?:-\w+\s+)?([A-Za-z_]\w*)", code))
    used = set(re.findall(r"^\s*([A-Za-z_]\w*)\+?=", code, re.M)) | set(re.findall(r"\bfor\s+([A-Za-z_]\w*)\s+in\b", code))
    assert used <= local, "variables not declared local: " + ", ".join(sorted(used - local))
    assert "$((" in code, "$(( )) must be used"
    assert not re.search(r"\b(expr|bc|awk)\b", code), "expr, bc and awk are not allowed"
    for line in code.splitlines():
        lead = line[:len(line) - len(line.lstrip())]
        assert "\t" not in lead and len(lead) % 4 == 0, "indent with 4 spaces: " + line
