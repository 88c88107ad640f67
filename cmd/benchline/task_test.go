package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchline/benchline/internal/gateway"
	"github.com/benchline/benchline/scorers/promptfoo"
)

// TestTaskCheckToolCalls: task check scores reply lines that carry
// tool_calls (arguments as an object or as OpenAI's string) with the
// tool_calls scorer, shows the calls, and refuses a line with neither a
// reply nor tool calls naming its line.
func TestTaskCheckToolCalls(t *testing.T) {
	dir := t.TempDir()
	writeIn(t, dir, "items.jsonl", `{"id": "a", "q": "Mean of 1 and 2?", "functions": [{"name": "stats.mean", "parameters": {"type": "dict", "properties": {"xs": {"type": "array", "items": {"type": "float"}}}, "required": ["xs"]}}], "gt": [{"stats.mean": {"xs": [[1.0, 2.0]]}}]}
{"id": "b", "q": "Mean of 3 and 4?", "functions": [{"name": "stats.mean", "parameters": {"type": "dict", "properties": {"xs": {"type": "array", "items": {"type": "float"}}}, "required": ["xs"]}}], "gt": [{"stats.mean": {"xs": [[3.0, 4.0]]}}]}
{"id": "c", "q": "Hello?", "functions": [{"name": "stats.mean", "parameters": {"type": "dict", "properties": {"xs": {"type": "array", "items": {"type": "float"}}}, "required": ["xs"]}}], "gt": []}
`)
	task := writeIn(t, dir, "tools.yaml", `name: tools
description: tool calls
data: {test: {path: items.jsonl}}
prompt:
  messages: [{role: user, content: "{{ q }}"}]
  tools: functions
scorers: [{type: tool_calls, expected: gt}]
`)
	replies := writeIn(t, dir, "replies.jsonl", `{"id": "a", "tool_calls": [{"name": "stats_mean", "arguments": {"xs": [1.0, 2.0]}}]}
{"id": "b", "tool_calls": [{"name": "stats_mean", "arguments": "{\"xs\": [3.0, 5.0]}"}]}
{"id": "c", "reply": "Hello!"}
`)
	rep, err := checkTask(task, 3, replies, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Scored != 3 || rep.Means["tool_calls"] != 2.0/3 {
		t.Fatalf("scored %d, means %v: want 3 and 2/3", rep.Scored, rep.Means)
	}
	got := map[string]float64{}
	for _, s := range rep.Samples {
		got[s.ID] = s.Verdicts[0].Score
		if s.ID == "a" && (s.Reply == nil || !strings.Contains(*s.Reply, `stats_mean({"xs": [1.0, 2.0]})`)) {
			t.Errorf("sample a shows %v", s.Reply)
		}
	}
	if got["a"] != 1 || got["b"] != 0 || got["c"] != 1 {
		t.Errorf("verdicts %v: want a 1, b 0 (a wrong value), c 1 (no call where none is expected)", got)
	}
	bad := writeIn(t, dir, "bad.jsonl", `{"id": "a", "tool_calls": [{"name": "stats_mean", "arguments": {"xs": [1.0, 2.0]}}]}
{"id": "b"}
`)
	if _, err := checkTask(task, 3, bad, nil); err == nil || !strings.Contains(err.Error(), "bad.jsonl:2") {
		t.Errorf("a line with no reply: %v, want an error naming bad.jsonl:2", err)
	}
}

// TestTaskCheckLMEval: task check reads an lm-evaluation-harness task
// YAML, its dataset_path from --data, and scores replies with lm-eval's
// filter pipelines under lm-eval's metric names; without --data it says
// which flag to add; task convert writes a task file that loads.
func TestTaskCheckLMEval(t *testing.T) {
	dir := t.TempDir()
	writeIn(t, dir, "data/test.jsonl", `{"id": "a", "question": "2+2?", "answer": "2+2=4\n#### 4"}
{"id": "b", "question": "3+3?", "answer": "3+3=6\n#### 6"}
`)
	task := writeIn(t, dir, "lm/gsm.yaml", `task: gsm_small
dataset_path: openai/gsm8k
test_split: test
output_type: generate_until
doc_to_text: "Question: {{question}}\nAnswer:"
doc_to_target: "{{answer}}"
generation_kwargs: {until: ["Question:"], do_sample: false}
metric_list: [{metric: exact_match, ignore_case: true, regexes_to_ignore: ["(?s).*#### "]}]
filter_list:
  - name: strict-match
    filter: [{function: regex, regex_pattern: "#### (\\-?[0-9]+)"}, {function: take_first}]
  - name: flexible-extract
    filter: [{function: regex, group_select: -1, regex_pattern: "(-?[0-9]+)"}, {function: take_first}]
`)
	replies := writeIn(t, dir, "replies.jsonl", `{"id": "a", "reply": "It is 4.\n#### 4"}
{"id": "b", "reply": "I say 6"}
`)
	if _, err := checkTask(task, 3, "", nil); err == nil || !strings.Contains(err.Error(), "--data openai/gsm8k=DIR") {
		t.Fatalf("without --data: %v", err)
	}
	rep, err := checkTask(task, 3, replies, map[string]string{"openai/gsm8k": filepath.Join(dir, "data", "test.jsonl")})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Task != "gsm-small" || strings.Join(rep.Metrics, " ") != "exact_match,strict-match exact_match,flexible-extract" {
		t.Errorf("task %s metrics %v", rep.Task, rep.Metrics)
	}
	if rep.Scored != 2 || rep.Means["exact_match,strict-match"] != 0.5 || rep.Means["exact_match,flexible-extract"] != 1 {
		t.Errorf("scored %d, means %v: want strict 0.5 (b has no ####), flexible 1", rep.Scored, rep.Means)
	}
	if got := rep.Samples[0].Messages; len(got) != 1 || got[0]["content"] != "Question: 2+2?\nAnswer:" {
		t.Errorf("prompt %v", got)
	}
	out := filepath.Join(dir, "gsm.yaml")
	cmd := newTaskConvertCmd()
	cmd.SetArgs([]string{task, "--data", "openai/gsm8k=" + filepath.Join(dir, "data", "test.jsonl"), "-o", out})
	cmd.SetOut(new(strings.Builder))
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	conv, err := checkTask(out, 3, replies, nil)
	if err != nil || conv.Means["exact_match,strict-match"] != 0.5 {
		t.Errorf("the converted task file: %+v (%v)", conv.Means, err)
	}
	b, _ := os.ReadFile(out)
	if !strings.Contains(string(b), "path: data/test.jsonl") {
		t.Errorf("converted data path is not relative to the output:\n%s", b)
	}
}

// TestTaskCheckLMEvalSameSplit: an lm-eval task whose examples come from
// the evaluated split (fewshot_split is test_split, gsm8k_platinum's
// shape) leaves each row out of its own examples when read through the
// data reader (first_n: the first 2 others), and its gen_prefix closes the
// chat as the assistant's message.
func TestTaskCheckLMEvalSameSplit(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "test.jsonl")
	task := filepath.Join(dir, "plat.yaml")
	for p, body := range map[string]string{
		data: `{"question": "a?", "answer": "#### 1", "n": 1.5}
{"question": "b?", "answer": "#### 2", "n": 2.5}
{"question": "c?", "answer": "#### 3", "n": 3.5}
`,
		task: `task: plat
dataset_path: madrylab/gsm8k-platinum
training_split: test
fewshot_split: test
test_split: test
num_fewshot: 2
fewshot_config: {sampler: first_n}
doc_to_text: "Q: {{question}}"
doc_to_target: "{{answer}}"
gen_prefix: "The answer is"
generation_kwargs: {until: ["Q:"], top_p: 0.9}
`,
	} {
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := checkTask(task, 3, "", map[string]string{"madrylab/gsm8k-platinum": data})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a?": "b? c?", "b?": "a? c?", "c?": "a? b?"}
	for _, s := range rep.Samples {
		m := s.Messages
		if len(m) != 6 || m[5]["role"] != "assistant" || m[5]["content"] != "The answer is" {
			t.Fatalf("the chat %v: want 2 examples, the question and the prefix last", m)
		}
		q := strings.TrimPrefix(m[4]["content"], "Q: ")
		if got := strings.TrimPrefix(m[0]["content"], "Q: ") + " " + strings.TrimPrefix(m[2]["content"], "Q: "); got != want[q] {
			t.Errorf("row %s: examples %s, want %s (the row itself left out)", q, got, want[q])
		}
		if !strings.HasPrefix(m[1]["content"], "The answer is #### ") {
			t.Errorf("row %s: an example's answer %q does not follow the prefix", q, m[1]["content"])
		}
	}
}

// TestConvertBeside: dataset build --task with --data writes the lm-eval
// task as a task file in the data's parent folder, its data relative.
func TestConvertBeside(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "gsm8k"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "gsm8k", "test.jsonl"), []byte(`{"q": "x", "a": "y"}`+"\n"), 0o644)
	task := filepath.Join(dir, "lm.yaml")
	os.WriteFile(task, []byte("task: my_task\ndataset_path: openai/gsm8k\ntest_split: test\ndoc_to_text: \"{{q}}\"\ndoc_to_target: a\n"), 0o644)
	out, err := convertBeside(task, []string{"openai/gsm8k=" + filepath.Join(dir, "gsm8k", "test.jsonl")})
	if err != nil {
		t.Fatal(err)
	}
	if out != filepath.Join(dir, "gsm8k", "my-task.task.yaml") {
		t.Errorf("wrote %s", out)
	}
	rep, err := checkTask(out, 1, "", nil)
	if err != nil || rep.Task != "my-task" || len(rep.Samples) != 1 {
		t.Errorf("the written task file: %+v (%v)", rep, err)
	}
	if _, err := convertBeside(task, []string{"other/data=" + dir}); err == nil || !strings.Contains(err.Error(), "--data openai/gsm8k=DIR") {
		t.Errorf("a --data for another dataset_path: %v", err)
	}
}

// TestTaskCheckPromptfoo: task check takes a promptfoo config where a task
// file goes, grades the given replies with each test's assertions (pass and
// the weighted score), with tool calls for is-valid-openai-tools-call, and
// refuses a reply naming no sample.
func TestTaskCheckPromptfoo(t *testing.T) {
	dir := t.TempDir()
	cfg := writeIn(t, dir, "promptfooconfig.yaml", `prompts: ["Answer: {{ q }}"]
providers:
  - id: openai:chat:m
    config:
      apiBaseUrl: http://127.0.0.1:1/v1
      tools: [{type: function, function: {name: add, parameters: {type: object, properties: {a: {type: number}}, required: [a]}}}]
tests:
  - vars: {q: "2+2"}
    assert:
      - {type: contains, value: "4", weight: 3}
      - {type: javascript, value: "output.length < 3"}
  - vars: {q: "add"}
    assert: [{type: is-valid-openai-tools-call}]
`)
	replies := writeIn(t, dir, "replies.jsonl", `{"id": "p0-t0", "reply": "it is 4"}
{"id": "p0-t1", "tool_calls": [{"name": "add", "arguments": {"a": 1}}]}
`)
	rep, err := checkTask(cfg, 3, replies, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Scored != 2 || rep.Means["pass"] != 0.5 || rep.Means["score"] != (0.75+1)/2 {
		t.Fatalf("report = %+v", rep)
	}
	if got := rep.Samples[0].Messages[0]["content"]; got != "Answer: 2+2" {
		t.Errorf("prompt = %q", got)
	}
	bad := writeIn(t, dir, "bad.jsonl", `{"id": "p3-t0", "reply": "x"}`+"\n")
	if _, err := checkTask(cfg, 3, bad, nil); err == nil || !strings.Contains(err.Error(), "p3-t0") {
		t.Fatalf("err = %v, want the unknown sample named", err)
	}

	// A test with a judged assertion is not graded here (no judges): it
	// says so and stays out of the means, not a 0.
	judged := writeIn(t, dir, "judged.yaml", `prompts: ["Answer: {{ q }}"]
tests:
  - vars: {q: "2+2"}
    assert: [{type: contains, value: "4"}]
  - vars: {q: "3+3"}
    assert: [{type: contains, value: "6"}, {type: llm-rubric, value: "is right"}]
`)
	two := writeIn(t, dir, "two.jsonl", `{"id": "p0-t0", "reply": "4"}
{"id": "p0-t1", "reply": "6"}
`)
	rep, err = checkTask(judged, 3, two, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Scored != 1 || rep.Means["pass"] != 1 || len(rep.Samples) != 2 || !strings.Contains(rep.Samples[1].Verdicts[0].Why, "not scored here") {
		t.Fatalf("report = %+v", rep)
	}
}

// TestPromptfooBeside translates a promptfoo config (a file:// prompt,
// file:// CSV tests, defaultTest, weights, a threshold, JavaScript, a
// number as a value) into a task file and its rows beside it: task check
// on the task file gives every sample the pass and score that task check
// on the config gives, and the chat is the one the config renders.
func TestPromptfooBeside(t *testing.T) {
	dir := t.TempDir()
	writeIn(t, dir, "prompt.txt", "Say {{ word }} {{ n }} times.\n")
	writeIn(t, dir, "tests.csv", "word,n,__expected\nhi,2,contains: hi\nbye,3,icontains: BYE\n")
	cfg := writeIn(t, dir, "My Config.yaml", `description: a test config
prompts: [file://prompt.txt, "Q: {{ word }}"]
providers:
  - id: openai:chat:m
    config: {apiBaseUrl: http://127.0.0.1:1/v1, temperature: 0.5}
defaultTest:
  assert: [{type: javascript, value: "output.length > context.vars.n", weight: 2}]
tests:
  - file://tests.csv
  - vars: {word: "4", n: 1, list: [1, "a"], map: {k: v}}
    threshold: 0.5
    assert:
      - {type: equals, value: 4}
      - {type: starts-with, value: "x", weight: 0.5}
`)
	replies := writeIn(t, dir, "replies.jsonl", `{"id": "p0-t0", "reply": "hi hi"}
{"id": "p1-t0", "reply": "h"}
{"id": "p0-t1", "reply": "bye"}
{"id": "p1-t1", "reply": "Bye bye bye"}
{"id": "p0-t2", "reply": "4"}
{"id": "p1-t2", "reply": "x4"}
`)
	want, err := checkTask(cfg, 100, replies, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := promptfoo.WriteBeside(cfg, raw)
	if err != nil {
		t.Fatal(err)
	}
	if out != filepath.Join(dir, "my-config.task.yaml") {
		t.Errorf("wrote %s", out)
	}
	got, err := checkTask(out, 100, replies, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Scored != 6 || want.Scored != 6 {
		t.Fatalf("scored %d and %d, want 6", got.Scored, want.Scored)
	}
	if got.Metrics[0] != "pass" || got.Means["pass"] != want.Means["pass"] || got.Means["score"] != want.Means["score"] {
		t.Errorf("means %v (%v), want %v", got.Means, got.Metrics, want.Means)
	}
	if want.Means["pass"] == 0 || want.Means["pass"] == 6 {
		t.Errorf("the replies should pass some tests and fail others: %v %+v", want.Means, want.Samples)
	}
	wantBy := map[string]checkSample{}
	for _, s := range want.Samples {
		wantBy[s.ID] = s
	}
	for _, s := range got.Samples {
		w := wantBy[s.ID]
		if fmt.Sprint(s.Messages) != fmt.Sprint(w.Messages) {
			t.Errorf("%s: chat %v, want %v", s.ID, s.Messages, w.Messages)
		}
		metric := map[string]float64{}
		for _, v := range s.Verdicts {
			metric[v.Metric] = v.Score
		}
		for _, v := range w.Verdicts[:2] {
			if metric[v.Metric] != v.Score {
				t.Errorf("%s: %s = %v, want %v", s.ID, v.Metric, metric[v.Metric], v.Score)
			}
		}
	}
}

// TestPromptfooModels: an openai:chat provider is the model of the
// providers file's entry whose base_url is its apiBaseUrl; one that no
// entry serves is named with what to add.
func TestPromptfooModels(t *testing.T) {
	g, err := gateway.LoadConfig(strings.NewReader("providers:\n  vllm: {base_url: http://gpu:8000/v1}\n  other: {base_url: http://gpu:9000/v1}\n"), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := promptfoo.Parse("c.yaml", []byte(`prompts: ["{{ a }}"]
providers:
  - {id: "openai:chat:qwen", config: {apiBaseUrl: "http://gpu:8000/v1/"}}
  - {id: "openai:chat:llama", config: {apiBaseUrl: "http://elsewhere/v1"}}
  - {id: "openai:chat:m2", config: {apiBaseUrl: "http://gpu:9000/v1"}}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	models, missing := promptfooModels(cfg, g)
	if fmt.Sprint(models) != "[vllm/qwen other/m2]" {
		t.Errorf("models %v", models)
	}
	if len(missing) != 1 || !strings.Contains(missing[0], "providers[1] (openai:chat:llama)") || !strings.Contains(missing[0], "http://elsewhere/v1") {
		t.Errorf("missing %v", missing)
	}
}

// writeIn writes body to the file name below dir, making its folders, and
// returns its path.
func writeIn(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
