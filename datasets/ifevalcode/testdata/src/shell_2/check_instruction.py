def check_instruction(response):
    import re
    m = re.search(r"```.*?\n(.*?)```", response, re.DOTALL)
    code = m.group(1) if m else response
    assert not re.search(r"\b(rev|awk|sed|perl|python3?)\b", code), "external programs are not allowed"
    assert re.search(r"\$\{\w+:[^}:]+:[^}]+\}", code), "substring expansion ${var:offset:length} is required"
    assert re.search(r"\b(for|while|until)\b", code), "a loop is required"
    assert len([l for l in code.splitlines() if l.strip()]) <= 10, "at most 10 non-empty lines"
    local = set(re.findall(r"\blocal\s+(?:-\w+\s+)?([A-Za-z_]\w*)", code))
    used = set(re.findall(r"^\s*([A-Za-z_]\w*)\+?=", code, re.M)) | set(re.findall(r"\bfor\s+\(\(\s*([A-Za-z_]\w*)\s*=", code))
    assert used <= local, "variables not declared local: " + ", ".join(sorted(used - local))
