"""A reference for scorers/lmeval, written after reading lm-evaluation-harness's
lm_eval/tasks/_yaml_loader.py (include merging), lm_eval/utils.py (apply_template),
lm_eval/api/task.py (doc_to_text, doc_to_target, doc_to_choice, process_results for
generate_until), lm_eval/filters/{extraction,selection,transformation}.py and
lm_eval/api/metrics.py (exact_match_hf_evaluate), step by step; plain lists stand in
for numpy's arrays (np.char.lower, np.char.translate and == act per element).

Reads JSON from stdin: {"cases": [{"task": FILE, "rows": [...], "replies": [[...], ...]}]}
and prints, for every row of every case, the rendered prompt and targets and every
"metric,filter" score, as JSON.
"""
import ast
import json
import random
import os
import re
import string
import sys
from collections import Counter

import jinja2
import yaml


def load_yaml(path):
    with open(path) as fh:
        cfg = yaml.safe_load(fh)
    if "include" not in cfg:
        return cfg
    includes = cfg.pop("include")
    merged = {}
    for inc in includes if isinstance(includes, list) else [includes]:
        inc_cfg = load_yaml(os.path.join(os.path.dirname(path), inc))
        inc_cfg.pop("task_list", None)
        merged.update(inc_cfg)
    merged.update(cfg)
    return merged


def regex_replace(s, pattern, repl, count=0):
    return re.sub(pattern, repl, s, count=count)


env = jinja2.Environment(loader=jinja2.BaseLoader, undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
env.filters["regex_replace"] = regex_replace


def apply_template(template, doc):
    return env.from_string(template).render(**doc)


def doc_to_text(cfg, doc):
    d = cfg["doc_to_text"]
    if isinstance(d, int):
        return d
    if d in doc:
        return doc[d]
    text = apply_template(d, doc)
    if text.isdigit() and cfg.get("doc_to_choice") is not None:
        return ast.literal_eval(text)
    return text


def doc_to_target(cfg, doc):
    d = cfg["doc_to_target"]
    if isinstance(d, int):
        return d
    if isinstance(d, list):
        return d
    if d in doc:
        return doc[d]
    s = apply_template(d, doc)
    if s.isdigit() and cfg.get("doc_to_choice") is not None:
        return ast.literal_eval(s)
    if len(s) >= 2 and s[0] == "[" and s[-1] == "]":
        try:
            return ast.literal_eval(s)
        except (SyntaxError, ValueError):
            return s
    return s


def doc_to_choice(cfg, doc):
    d = cfg["doc_to_choice"]
    if isinstance(d, str):
        if d in doc:
            return doc[d]
        return ast.literal_eval(apply_template(d, doc))
    if isinstance(d, list):
        return d
    return list(d.values())


# filters: each takes a list (one entry per row) of lists of replies


def f_regex(resps, regex_pattern=r"#### (\-?[0-9\.\,]+)", group_select=0, fallback="[invalid]"):
    rx = re.compile(regex_pattern)
    out = []
    for inst in resps:
        filtered = []
        for resp in inst:
            if not isinstance(resp, str):
                resp = ""
            match = rx.findall(resp)
            if match:
                match = match[group_select]
                if isinstance(match, tuple):
                    match = [m for m in match if m]
                    match = match[0] if match else fallback
                match = match.strip()
            else:
                match = fallback
            filtered.append(match)
        out.append(filtered)
    return out


def f_take_first(resps):
    return [r[0] for r in resps]


def f_majority_vote(resps):
    return [[Counter(r).most_common(1)[0][0]] for r in resps]


def f_take_first_k(resps, k):
    resps = list(resps)
    assert len(resps[0]) >= k
    return [r[:k] for r in resps]


def f_lowercase(resps):
    return [[x.lower() for x in r] for r in resps]


def f_uppercase(resps):
    return [[x.upper() for x in r] for r in resps]


def f_remove_whitespace(resps):
    return [[x.strip() for x in r] for r in resps]


def f_map(resps, mapping_dict=None, default_value=None):
    mapping_dict = mapping_dict or {}
    return [[mapping_dict.get(x, default_value) for x in r] for r in resps]


PUNCT_TBL = None


def f_multi_choice_regex(resps, docs, regex_pattern=r"#### (\-?[0-9\.\,]+)", group_select=0, fallback="[invalid]",
                         ignore_case=False, ignore_punctuation=False, regexes_to_ignore=None):
    # lm_eval/filters/extraction.py's MultiChoiceRegexFilter.apply
    import unicodedata
    regex = re.compile(regex_pattern)

    def find_match(regex, resp, convert_dict={}):
        if not isinstance(resp, str):
            resp = ""
        match = regex.findall(resp)
        if match:
            match = match[group_select]
            if isinstance(match, tuple):
                non_empty = [m for m in match if m]
                if not non_empty:
                    return ""
                match = non_empty[0]
            match = match.strip()
            if match and match in convert_dict:
                match = convert_dict[match]
        return match

    global PUNCT_TBL
    if PUNCT_TBL is None:  # the same table each call: built once
        PUNCT_TBL = dict.fromkeys(i for i in range(sys.maxunicode) if unicodedata.category(chr(i)).startswith("P"))
    punct_tbl = PUNCT_TBL

    def filter_ignores(st):
        if regexes_to_ignore is not None:
            for s in regexes_to_ignore:
                st = re.sub(s, "", st)
        if ignore_case:
            st = st.lower()
        if ignore_punctuation:
            st = st.translate(punct_tbl)
        return st

    filtered_resps = []
    for r, doc in zip(resps, docs):
        fallback_regexes = []
        choice_to_alpha = {}
        next_alpha = "A"
        without_paren_fallback_regexes = []
        without_paren_to_target = {}
        for c in doc["choices"]:
            m = filter_ignores(c.strip())
            fallback_regexes.append(f"{re.escape(m)}")
            choice_to_alpha[m] = f"({next_alpha})"
            without_paren_fallback_regexes.append(next_alpha)
            without_paren_to_target[next_alpha] = f"({next_alpha})"
            next_alpha = chr(ord(next_alpha) + 1)
        fallback_regex = re.compile("|".join(fallback_regexes))
        without_paren_fallback_regex = re.compile(rf":[\s]*({'|'.join(without_paren_fallback_regexes)})")
        filtered = []
        for resp in r:
            match = find_match(regex, resp)
            if not match:
                match = find_match(fallback_regex, filter_ignores(resp), choice_to_alpha)
                if not match:
                    match = find_match(without_paren_fallback_regex, resp, without_paren_to_target)
            if not match:
                match = fallback
            filtered.append(match)
        filtered_resps.append(filtered)
    return filtered_resps


FILTERS = {
    "regex": f_regex, "take_first": f_take_first, "majority_vote": f_majority_vote, "take_first_k": f_take_first_k,
    "lowercase": f_lowercase, "uppercase": f_uppercase, "remove_whitespace": f_remove_whitespace, "map": f_map,
}


def exact_match(predictions, references, regexes_to_ignore=None, ignore_case=False,
                ignore_punctuation=False, ignore_numbers=False):
    if regexes_to_ignore is not None:
        for s in regexes_to_ignore:
            predictions = [re.sub(s, "", x) for x in predictions]
            references = [re.sub(s, "", x) for x in references]
    if ignore_case:
        predictions = [x.lower() for x in predictions]
        references = [x.lower() for x in references]
    if ignore_punctuation:
        table = string.punctuation.maketrans("", "", string.punctuation)
        predictions = [x.translate(table) for x in predictions]
        references = [x.translate(table) for x in references]
    if ignore_numbers:
        table = string.digits.maketrans("", "", string.digits)
        predictions = [x.translate(table) for x in predictions]
        references = [x.translate(table) for x in references]
    scores = [p == r for p, r in zip(predictions, references)]
    return sum(scores) / len(scores)


def resolve_field(doc, field):
    if field:
        return doc[field] if field in doc else apply_template(field, doc)


def maybe_delimit(prefix, suffix, delimiter=" "):
    if not prefix:
        return suffix or ""
    if not suffix:
        return prefix or ""
    return prefix + delimiter + suffix if not (prefix[-1].isspace() or suffix[0].isspace()) else prefix + suffix


def chat(cfg, doc, fewshot_rows=None, rnd=None):
    """fewshot_context under --apply_chat_template (fewshot_as_multiturn on):
    the description as the system message, each example a user and an
    assistant turn (build_qa_turn), then the document's question."""
    messages = []
    if cfg.get("description"):
        messages.append({"role": "system", "content": apply_template(cfg["description"], doc)})
    n = cfg.get("num_fewshot") or 0
    fc = cfg.get("fewshot_config") or {}
    if n > 0:
        shot_cfg = dict(cfg)
        for k in ("doc_to_text", "doc_to_target"):
            if fc.get(k) is not None:
                shot_cfg[k] = fc[k]
        if fewshot_rows is not None:
            # lm-eval's fewshot_context hands the sampler the document when
            # the few-shot split is test_split (None == None when neither is
            # set); ContextSampler.sample then draws n+1 and rm_eval_doc
            # keeps the first n not equal to it, FirstNSampler the first n
            # of the pool without it; else rnd.sample(docs, n), docs[:n].
            split = fc.get("split", cfg.get("fewshot_split"))
            eval_doc = doc if split == cfg.get("test_split") else None
            docs = list(fewshot_rows)
            if fc.get("sampler", "default") == "first_n":
                pool = [x for x in docs if x != eval_doc] if eval_doc is not None else docs
                assert n <= len(pool)
                shots = pool[:n]
            else:
                shots = rnd.sample(docs, n) if not eval_doc else [x for x in rnd.sample(docs, n + 1) if x != eval_doc][:n]
                assert len(shots) == n
        else:
            assert fc.get("sampler") == "first_n"
            shots = fc["samples"][:n]
        for fs_doc in shots:
            q = doc_to_text(shot_cfg, fs_doc)
            a = doc_to_target(shot_cfg, fs_doc)
            c = doc_to_choice(cfg, fs_doc) if cfg.get("doc_to_choice") is not None else None
            answer = c[a] if (c and isinstance(a, int)) else a[0] if isinstance(a, list) else a
            # build_qa_turn: the answer after the example's gen_prefix
            # (fewshot_config's, inherited from the task's).
            answer = maybe_delimit(resolve_field(fs_doc, fc.get("gen_prefix", cfg.get("gen_prefix"))), answer, delimiter=" ")
            messages.append({"role": "user", "content": q})
            messages.append({"role": "assistant", "content": answer})
    messages.append({"role": "user", "content": doc_to_text(cfg, doc)})
    # doc_to_prefix, then build_qa_turn's last message: the prefix as the
    # assistant's (the chat template's add_generation_prompt off); the chat
    # API model sends the messages as they are.
    prefix = cfg.get("gen_prefix")
    if prefix is not None:
        prefix = doc[prefix] if prefix in doc else apply_template(prefix, doc)
    if prefix:
        messages.append({"role": "assistant", "content": prefix})
    return messages


def payload(cfg):
    """The generation settings of lm-eval's local-chat-completions request
    (LocalChatCompletion._create_payload, no eos_string and no tokenizer so
    no eos is added; messages, model and seed left out): do_sample dropped,
    max_tokens else max_gen_toks else 256, temperature else 0, until as
    stop (its first 4), every other key sent as it is. TaskConfig's
    __post_init__ makes the temperature a float and until the
    fewshot_delimiter when not given; with no generation_kwargs,
    default_gen_kwargs."""
    delim = cfg.get("fewshot_delimiter", "\n\n")
    gen = cfg.get("generation_kwargs")
    if gen is None:
        gen = {"temperature": 0.0, "do_sample": False, "max_gen_toks": 256, "until": [delim]}
    gen = dict(gen)
    if "temperature" in gen:
        gen["temperature"] = float(gen["temperature"])
    if "until" not in gen:
        gen["until"] = [delim]
    gen.pop("do_sample", False)
    if "max_tokens" in gen:
        max_tokens = gen.pop("max_tokens")
    else:
        max_tokens = gen.pop("max_gen_toks", 256)
    temperature = gen.pop("temperature", 0)
    stop = gen.pop("until", None)
    if isinstance(stop, str):
        stop = [stop]
    elif stop is None:
        stop = []
    return {"max_tokens": max_tokens, "temperature": temperature, "stop": stop[:4], **gen}


def run(case):
    cfg = load_yaml(case["task"])
    pipelines = cfg.get("filter_list") or [{"name": "none", "filter": [{"function": "take_first"}]}]
    metrics = cfg.get("metric_list") or [{"metric": "exact_match"}]
    rows = case["rows"]
    # lm-eval decides multiple targets on the first document.
    multiple_target = isinstance(doc_to_target(cfg, rows[0]), list)
    out = []
    # lm-eval's evaluator seeds the task's sampler once
    # (set_fewshot_seed(1234)); its state runs on over the documents.
    rnd = random.Random(1234)
    for doc, replies in zip(rows, case["replies"]):
        res = {"prompt": doc_to_text(cfg, doc), "description": apply_template(cfg["description"], doc) if cfg.get("description") else "", "scores": {}}
        res["messages"] = chat(cfg, doc, case.get("fewshot_rows"), rnd)
        res["params"] = payload(cfg)
        gold = doc_to_target(cfg, doc)
        for p in pipelines:
            resps = [list(replies)]
            for step in p["filter"]:
                kw = {k: v for k, v in step.items() if k != "function"}
                if step["function"] == "multi_choice_regex":
                    resps = list(f_multi_choice_regex(resps, [doc], **kw))
                else:
                    resps = list(FILTERS[step["function"]](resps, **kw))
            result = resps[0]
            g = gold
            if cfg.get("doc_to_choice") is not None:
                g = doc_to_choice(cfg, doc)[g]
            elif multiple_target:
                g = list(g)
            elif type(g) is not type(result) and not isinstance(result, list):
                g = type(result)(g)
            for m in metrics:
                name = m["metric"]
                kw = {k: v for k, v in m.items() if k not in ("metric", "aggregation", "higher_is_better")}
                if multiple_target:
                    gl = g if isinstance(g, list) else [g]
                    s = exact_match(references=gl, predictions=[result for _ in gl], **kw)
                    score = 1.0 if s > 0.0 else 0.0
                else:
                    score = exact_match(references=[g], predictions=[result], **kw)
                res["scores"][name + "," + p["name"]] = float(score)
        res["targets"] = [str(x) for x in gold] if isinstance(gold, list) else [str(gold if cfg.get("doc_to_choice") is None else doc_to_choice(cfg, doc)[gold])]
        out.append(res)
    return out


def main():
    req = json.load(sys.stdin)
    json.dump([run(c) for c in req["cases"]], sys.stdout)


main()
