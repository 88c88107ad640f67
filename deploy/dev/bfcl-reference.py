#!/usr/bin/env python3
"""bfcl-reference.py: run the reference BFCL AST checker over benchline's
exported conformance cases and time it.

    bfcl-reference.py --bfcl PATH --cases cases.jsonl [--verdicts out.jsonl] [--passes N]

PATH is a checkout of ShishirPatil/gorilla (or its
berkeley-function-call-leaderboard directory). This script holds no BFCL
code: it copies the checker files it needs from PATH into a temporary
directory (ast_checker.py, type_convertor/, constants/enums.py and
constants/type_mappings.py), writes a stub constants/model_config.py there
(the real one pulls third-party packages; the checker reads only the
underscore_to_dot flag from it) and imports the copies. The runner's two
helpers the verdict depends on, is_function_calling_format_output and
is_empty_output, are compiled from bfcl_eval/utils.py's source alone, since
importing that module would pull third-party packages too. Nothing in PATH
is modified. Standard library only (Python 3.9+).

Cases are the JSON lines `BFCL_EXPORT_CASES=FILE go test ./scorers/bfcl -run
TestConformance` writes. Each case is scored the way the BFCL eval runner
does it: for the relevance categories the runner's rule (a call is present
iff not is_empty_output); otherwise the runner's format check, then
ast_checker(functions, model_output, possible_answer, language, category,
model). A checker exception is recorded as "exception:<Class>".

Timing: every line is decoded first, outside the clock; then each pass
scores every case and is timed with time.process_time() (this process's
CPU time, so other load on the machine does not count). The script prints
one line per pass and a final summary line:

    reference checks=N passes=P cpu_s=S checks_per_cpu_s=R

--verdicts writes the first pass's verdicts in
scorers/bfcl/testdata/reference_expected.jsonl's format, in case order.
"""

import argparse
import ast
import json
import os
import shutil
import sys
import tempfile
import time

CHECKER_FILES = [
    "bfcl_eval/eval_checker/ast_eval/ast_checker.py",
    "bfcl_eval/eval_checker/ast_eval/type_convertor/java_type_converter.py",
    "bfcl_eval/eval_checker/ast_eval/type_convertor/js_type_converter.py",
    "bfcl_eval/constants/enums.py",
    "bfcl_eval/constants/type_mappings.py",
]
PACKAGES = [
    "bfcl_eval",
    "bfcl_eval/constants",
    "bfcl_eval/eval_checker",
    "bfcl_eval/eval_checker/ast_eval",
    "bfcl_eval/eval_checker/ast_eval/type_convertor",
]
RUNNER_HELPERS = ["is_function_calling_format_output", "is_empty_output"]

# Two model names without "_" (the checker maps "_" to "/" before the
# lookup), one per value of the flag.
MODEL_DEFAULT = "benchline-harness"
MODEL_U2D = "benchline-harness-u2d"
MODEL_CONFIG_STUB = f'''"""Stub written by benchline's bfcl-reference.py: the AST checker reads
only underscore_to_dot from a model's config."""


class _ModelConfig:
    def __init__(self, underscore_to_dot):
        self.underscore_to_dot = underscore_to_dot


MODEL_CONFIG_MAPPING = {{
    "{MODEL_DEFAULT}": _ModelConfig(False),
    "{MODEL_U2D}": _ModelConfig(True),
}}
'''


def fail(msg):
    print(f"bfcl-reference: {msg}", file=sys.stderr)
    sys.exit(2)


def find_root(path):
    """The directory holding bfcl_eval/ inside a BFCL checkout."""
    for cand in (path, os.path.join(path, "berkeley-function-call-leaderboard")):
        if os.path.isfile(os.path.join(cand, CHECKER_FILES[0])):
            return cand
    fail(f"{path}: no {CHECKER_FILES[0]} here or under berkeley-function-call-leaderboard/")


def runner_helpers(root):
    """Compiles the runner helpers from bfcl_eval/utils.py's source."""
    path = os.path.join(root, "bfcl_eval/utils.py")
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), filename=path)
    except (OSError, SyntaxError) as e:
        fail(f"{path}: {e}")
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in RUNNER_HELPERS]
    missing = set(RUNNER_HELPERS) - {n.name for n in defs}
    if missing:
        fail(f"{path}: no function {', '.join(sorted(missing))}")
    ns = {}
    exec(compile(ast.Module(body=defs, type_ignores=[]), path, "exec"), ns)
    return ns["is_function_calling_format_output"], ns["is_empty_output"]


def load_checker(root, scratch):
    """Copies the checker files into scratch and imports them from there."""
    for pkg in PACKAGES:
        os.makedirs(os.path.join(scratch, pkg), exist_ok=True)
        open(os.path.join(scratch, pkg, "__init__.py"), "w").close()
    for rel in CHECKER_FILES:
        src = os.path.join(root, rel)
        if not os.path.isfile(src):
            fail(f"{root}: missing {rel}")
        shutil.copyfile(src, os.path.join(scratch, rel))
    with open(os.path.join(scratch, "bfcl_eval/constants/model_config.py"), "w") as f:
        f.write(MODEL_CONFIG_STUB)
    sys.path.insert(0, scratch)
    sys.dont_write_bytecode = True
    from bfcl_eval.constants.enums import Language
    from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker

    return ast_checker, Language


def load_cases(path, Language):
    cases = []
    try:
        f = open(path, encoding="utf-8")
    except OSError as e:
        fail(str(e))
    with f:
        for n, line in enumerate(f, 1):
            try:
                c = json.loads(line)
                cases.append((
                    c["id"],
                    c["corruption"],
                    c["category"],
                    Language(c["language"]),
                    c["functions"],
                    c["model_output"],
                    c.get("possible_answer"),
                    MODEL_U2D if c.get("underscore_to_dot") else MODEL_DEFAULT,
                ))
            except (ValueError, KeyError, TypeError) as e:
                fail(f"{path}:{n}: bad case line: {e!r}")
    if not cases:
        fail(f"{path}: no cases")
    return cases


def score_all(cases, ast_checker, is_format, is_empty):
    """One pass over every case, the eval runner's way. Returns the verdicts
    as (valid, error_type) pairs."""
    out = []
    append = out.append
    for _id, _corr, category, lang, funcs, output, possible, model in cases:
        if "relevance" in category:  # irrelevance, live_irrelevance, live_relevance
            has_call = not is_empty(output)
            if "irrelevance" in category:
                append((True, "") if not has_call else (False, "irrelevance_error:decoder_success"))
            else:
                append((True, "") if has_call else (False, "relevance_error:decoder_failed"))
            continue
        if not is_format(output):
            append((False, "ast_decoder:decoder_wrong_output_format"))
            continue
        try:
            r = ast_checker(funcs, output, possible, lang, category, model)
        except Exception as e:  # the reference raising is a verdict too
            append((False, "exception:" + type(e).__name__))
            continue
        append((True, "") if r["valid"] else (False, r["error_type"]))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bfcl", required=True, help="a BFCL (ShishirPatil/gorilla) checkout")
    p.add_argument("--cases", required=True, help="cases exported with BFCL_EXPORT_CASES")
    p.add_argument("--verdicts", help="write the verdicts here (reference_expected.jsonl format)")
    p.add_argument("--passes", type=int, default=1, help="timed passes over all cases (default 1)")
    a = p.parse_args()
    if a.passes < 1:
        fail("--passes must be at least 1")
    root = find_root(a.bfcl)
    is_format, is_empty = runner_helpers(root)
    with tempfile.TemporaryDirectory(prefix="bfcl-reference-") as scratch:
        ast_checker, Language = load_checker(root, scratch)
        cases = load_cases(a.cases, Language)
        first = None
        total_cpu = 0.0
        for i in range(a.passes):
            t0 = time.process_time()
            verdicts = score_all(cases, ast_checker, is_format, is_empty)
            dt = time.process_time() - t0
            total_cpu += dt
            if first is None:
                first = verdicts
            elif verdicts != first:
                fail(f"pass {i + 1} gave other verdicts than pass 1")
            print(f"pass {i + 1}: checks={len(cases)} cpu_s={dt:.3f} checks_per_cpu_s={len(cases) / dt:.0f}", flush=True)
    if a.verdicts:
        with open(a.verdicts, "w", encoding="utf-8") as f:
            for c, (valid, etype) in zip(cases, first):
                f.write(json.dumps({"id": c[0], "corruption": c[1], "valid": valid, "error_type": etype}) + "\n")
    n = len(cases) * a.passes
    print(f"reference checks={n} passes={a.passes} cpu_s={total_cpu:.3f} checks_per_cpu_s={n / total_cpu:.0f}")


if __name__ == "__main__":
    main()
