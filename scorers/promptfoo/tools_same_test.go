package promptfoo

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/scorers/taskfile"
)

// toolsConfig offers two tools; each test's q tells toolServer what to
// answer: "call NAME ARGS" a tool call, "calls" two, anything else text.
const toolsConfig = `description: a config offering tools, graded by promptfoo and by benchline
prompts: ["{{ q }}"]
providers:
  - id: openai:chat:tools
    config:
      apiBaseUrl: SERVER_URL
      temperature: 0
      tools:
        - type: function
          function:
            name: get_weather
            description: the weather in a city
            parameters: {type: object, properties: {city: {type: string}, unit: {type: string, enum: [c, f]}}, required: [city]}
        - type: function
          function:
            name: add
            parameters: {type: object, properties: {a: {type: number}, b: {type: number}}, required: [a, b]}
tests:
  - vars: {q: 'call get_weather {"city": "Paris"}'}
    assert: [{type: is-valid-openai-tools-call}]
  - vars: {q: 'call get_weather {"city": "Paris", "unit": "k"}'}
    assert: [{type: is-valid-openai-tools-call}]
  - vars: {q: 'call get_weather {"unit": "c"}'}
    assert: [{type: is-valid-openai-tools-call}, {type: contains, value: get_weather}]
  - vars: {q: 'call get_time {"zone": "UTC"}'}
    assert: [{type: is-valid-openai-tools-call}]
  - vars: {q: 'call add {"a": 1, "b": 2'}
    assert: [{type: is-valid-openai-tools-call}]
  - vars: {q: 'call add {"a": 1, "b": 2}'}
    assert:
      - {type: is-valid-openai-tools-call}
      - {type: javascript, value: 'output[0].function.name === "add" && JSON.parse(output[0].function.arguments).b === 2'}
      - {type: contains, value: '"arguments"'}
  - vars: {q: 'calls'}
    assert:
      - {type: is-valid-openai-tools-call}
      - {type: javascript, value: 'output.length === 2'}
  - vars: {q: 'no tools, just text'}
    assert: [{type: is-valid-openai-tools-call}]
  - vars: {q: 'plain answer'}
    assert: [{type: not-is-valid-openai-tools-call}, {type: contains, value: plain}]
  - vars: {q: 'call add {"a": "one", "b": 2}'}
    assert: [{type: is-valid-openai-tools-call, weight: 2}, {type: contains, value: add, weight: 1}]
`

// toolServer answers chat completions as toolsConfig's tests ask, and
// records the tools each request offered.
type toolServer struct {
	mu    sync.Mutex
	tools []string
}

func (s *toolServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req openai.ChatCompletionRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	b, _ := json.Marshal(req.Tools)
	s.mu.Lock()
	s.tools = append(s.tools, string(b))
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(openai.ChatCompletionResponse{ID: "x", Object: "chat.completion", Model: req.Model,
		Choices: []openai.ChatCompletionChoice{{Message: toolReply(req.Messages[len(req.Messages)-1].Content), FinishReason: "stop"}}})
}

// toolReply is the reply toolServer gives to the user's message q.
func toolReply(q string) openai.ChatCompletionMessage {
	call := func(i int, name, args string) openai.ToolCall {
		return openai.ToolCall{ID: fmt.Sprintf("call_%d", i), Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: name, Arguments: args}}
	}
	m := openai.ChatCompletionMessage{Role: "assistant"}
	switch {
	case strings.HasPrefix(q, "call "):
		name, args, _ := strings.Cut(strings.TrimPrefix(q, "call "), " ")
		m.ToolCalls = []openai.ToolCall{call(0, name, args)}
	case q == "calls":
		m.ToolCalls = []openai.ToolCall{call(0, "add", `{"a": 2, "b": 3}`), call(1, "get_weather", `{"city": "Oslo"}`)}
	default:
		m.Content = q
	}
	return m
}

// TestToolsSameAsPromptfoo runs promptfoo 0.123.1 on a config offering
// tools against a server that answers with tool calls, then benchline on
// the config's translation (the task file dataset build writes): the
// tools offered are the config's, and every test's pass and score, graded
// by the translated task's scorers from the reply with its tool calls,
// equal promptfoo's.
func TestToolsSameAsPromptfoo(t *testing.T) {
	main := promptfooMain(t)
	srv := &toolServer{}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	dir := t.TempDir()
	config := strings.ReplaceAll(toolsConfig, "SERVER_URL", hs.URL+"/v1")
	if err := os.WriteFile(filepath.Join(dir, "promptfooconfig.yaml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	results := runPromptfoo(t, main, dir)

	cfg, err := Parse(filepath.Join(dir, "promptfooconfig.yaml"), []byte(config), DirReader(dir))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := cfg.Translate("c.rows.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	c, err := taskfile.Load("c.task.yaml", tr.TaskFile)
	if err != nil {
		t.Fatalf("Load: %v\n%s", err, tr.TaskFile)
	}
	if c.Spec.Prompt.Tools != ToolsColumn {
		t.Fatalf("the task file offers tools from %q, want %s", c.Spec.Prompt.Tools, ToolsColumn)
	}
	rows := strings.Split(strings.TrimSpace(string(tr.Rows)), "\n")
	if len(results) != len(rows) || len(rows) != len(cfg.Tests) {
		t.Fatalf("promptfoo has %d results, the translation %d rows, the config %d tests", len(results), len(rows), len(cfg.Tests))
	}
	// Every row offers the tools promptfoo sent with each request.
	srv.mu.Lock()
	offered := slices.Clone(srv.tools)
	srv.mu.Unlock()
	if len(offered) != len(rows) {
		t.Fatalf("promptfoo made %d requests for %d tests", len(offered), len(rows))
	}
	var sent any
	if err := json.Unmarshal([]byte(offered[0]), &sent); err != nil || !strings.Contains(offered[0], "get_weather") {
		t.Fatalf("promptfoo offered %s (%v), want the config's tools", offered[0], err)
	}
	passes, fails := 0, 0
	for _, r := range results {
		var fields map[string]any
		if err := json.Unmarshal([]byte(rows[r.TestIdx]), &fields); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(fields[ToolsColumn], sent) {
			t.Errorf("test %d: the row offers %v, promptfoo sent %v", r.TestIdx, fields[ToolsColumn], sent)
		}
		row := taskfile.Row{ID: fmt.Sprint(fields["id"]), Fields: fields}
		msgs, err := c.Messages(row, nil)
		if err != nil {
			t.Fatal(err)
		}
		reply := toolReply(msgs[len(msgs)-1].Content)
		metrics, verdicts, _ := c.ScoreReplies(row, []taskfile.Reply{{Text: reply.Content, ToolCalls: reply.ToolCalls}})
		pass, score := metrics["pass"], metrics["score"]
		if (pass == 1) != r.GradingResult.Pass || math.Abs(score-r.GradingResult.Score) > 1e-9 {
			t.Errorf("test %d (%q): benchline pass=%v score=%v (%v), promptfoo pass=%v score=%v (%s %s)",
				r.TestIdx, msgs[len(msgs)-1].Content, pass, score, verdicts, r.GradingResult.Pass, r.GradingResult.Score, r.GradingResult.Reason, r.Error)
		}
		if pass == 1 {
			passes++
		} else {
			fails++
		}
	}
	if passes == 0 || fails == 0 {
		t.Errorf("%d passes and %d fails: want both", passes, fails)
	}
	t.Logf("%d tests: %d pass, %d fail, all as promptfoo", len(rows), passes, fails)
}
