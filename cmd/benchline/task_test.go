package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTaskCheckToolCalls: task check scores reply lines that carry
// tool_calls (arguments as an object or as OpenAI's string) with the
// tool_calls scorer, shows the calls, and refuses a line with neither a
// reply nor tool calls naming its line.
func TestTaskCheckToolCalls(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("items.jsonl", `{"id": "a", "q": "Mean of 1 and 2?", "functions": [{"name": "stats.mean", "parameters": {"type": "dict", "properties": {"xs": {"type": "array", "items": {"type": "float"}}}, "required": ["xs"]}}], "gt": [{"stats.mean": {"xs": [[1.0, 2.0]]}}]}
{"id": "b", "q": "Mean of 3 and 4?", "functions": [{"name": "stats.mean", "parameters": {"type": "dict", "properties": {"xs": {"type": "array", "items": {"type": "float"}}}, "required": ["xs"]}}], "gt": [{"stats.mean": {"xs": [[3.0, 4.0]]}}]}
{"id": "c", "q": "Hello?", "functions": [{"name": "stats.mean", "parameters": {"type": "dict", "properties": {"xs": {"type": "array", "items": {"type": "float"}}}, "required": ["xs"]}}], "gt": []}
`)
	task := write("tools.yaml", `name: tools
description: tool calls
data: {test: {path: items.jsonl}}
prompt:
  messages: [{role: user, content: "{{ q }}"}]
  tools: functions
scorers: [{type: tool_calls, expected: gt}]
`)
	replies := write("replies.jsonl", `{"id": "a", "tool_calls": [{"name": "stats_mean", "arguments": {"xs": [1.0, 2.0]}}]}
{"id": "b", "tool_calls": [{"name": "stats_mean", "arguments": "{\"xs\": [3.0, 5.0]}"}]}
{"id": "c", "reply": "Hello!"}
`)
	rep, err := checkTask(task, 3, replies)
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
	bad := write("bad.jsonl", `{"id": "a", "tool_calls": [{"name": "stats_mean", "arguments": {"xs": [1.0, 2.0]}}]}
{"id": "b"}
`)
	if _, err := checkTask(task, 3, bad); err == nil || !strings.Contains(err.Error(), "bad.jsonl:2") {
		t.Errorf("a line with no reply: %v, want an error naming bad.jsonl:2", err)
	}
}

// TestTaskCheckPromptfoo: task check takes a promptfoo config where a task
// file goes, grades the given replies with each test's assertions (pass and
// the weighted score), with tool calls for is-valid-openai-tools-call, and
// refuses a reply naming no sample.
func TestTaskCheckPromptfoo(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cfg := write("promptfooconfig.yaml", `prompts: ["Answer: {{ q }}"]
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
	replies := write("replies.jsonl", `{"id": "p0-t0", "reply": "it is 4"}
{"id": "p0-t1", "tool_calls": [{"name": "add", "arguments": {"a": 1}}]}
`)
	rep, err := checkTask(cfg, 3, replies)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Scored != 2 || rep.Means["pass"] != 0.5 || rep.Means["score"] != (0.75+1)/2 {
		t.Fatalf("report = %+v", rep)
	}
	if got := rep.Samples[0].Messages[0]["content"]; got != "Answer: 2+2" {
		t.Errorf("prompt = %q", got)
	}
	bad := write("bad.jsonl", `{"id": "p3-t0", "reply": "x"}`+"\n")
	if _, err := checkTask(cfg, 3, bad); err == nil || !strings.Contains(err.Error(), "p3-t0") {
		t.Fatalf("err = %v, want the unknown sample named", err)
	}
}
