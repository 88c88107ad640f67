package promptfoo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/internal/modelapi"
	"github.com/benchline/benchline/scorers"
	"github.com/benchline/benchline/scorers/taskfile"
)

// judgedAssert is one judged (or plain) assertion of the comparison: its
// type, value, extra keys, and the grader's reply to it.
type judgedAssert struct {
	typ, value, extra, reply string
}

// judgedTest is one test of the comparison.
type judgedTest struct {
	extra   string
	asserts []judgedAssert
}

// sameOutput is what the evaluated model answers every prompt.
const sameOutput = "Paris is the capital of France."

var judgedTests = []judgedTest{
	{"", []judgedAssert{{"llm-rubric", "is polite", "", `{"reason": "fine", "pass": true, "score": 0.8}`}}},
	{"", []judgedAssert{{"llm-rubric", "is polite", "threshold: 0.9", `{"pass": true, "score": 0.8}`}}},
	{"", []judgedAssert{{"llm-rubric", "is polite", "threshold: 0.8", `{"pass": true, "score": 0.8}`}}},
	{"", []judgedAssert{{"llm-rubric", "is polite", "threshold: 0.5", `{"pass": false, "score": 0.9}`}}},
	{"", []judgedAssert{{"not-llm-rubric", "is rude", "", `{"pass": true, "score": 0.8}`}}},
	{"", []judgedAssert{{"not-llm-rubric", "is rude", "", `{"pass": false, "score": 1.5}`}}},
	{"", []judgedAssert{{"not-llm-rubric", "is rude", "threshold: 0.5", `{"pass": true, "score": 0.3}`}}},
	{"", []judgedAssert{{"llm-rubric", "is short", "", `I think {"pass": "Yes"} sums it up`}}},
	{"", []judgedAssert{{"llm-rubric", "is short", "", `{"pass": "maybe", "score": "0.25"}`}}},
	{"", []judgedAssert{{"llm-rubric", "is short", "", `{"score": 0.4}`}}},
	{"", []judgedAssert{{"llm-rubric", "is short", "", `{"pass": false, "score": null}`}}},
	{"", []judgedAssert{{"llm-rubric", "is short", "", `{"pass": true, "score": "high"}`}}},
	{"", []judgedAssert{{"llm-rubric", "is short", "", "Verdict: {pass: false, score: 0.3, reason: rude}"}}},
	{"", []judgedAssert{{"llm-rubric", "is short", "", `{"pass": false, "score": 0} then {"pass": true, "score": 1}`}}},
	{"", []judgedAssert{{"llm-rubric", "is short", "", "```json\n{\"pass\": true, \"score\": 0.6, \"reason\": \"ok\"}\n```"}}},
	{"", []judgedAssert{{"llm-rubric", "is short", "", `{"pass": 1, "score": true}`}}},
	{"", []judgedAssert{{"llm-rubric", "is short", "", `It is short.`}}},
	{"", []judgedAssert{{"model-graded-closedqa", "names Paris", "", "Step 1: it names Paris.\nY\n\n"}}},
	{"", []judgedAssert{{"model-graded-closedqa", "names Lyon", "", "It names Paris instead.\nN"}}},
	{"", []judgedAssert{{"model-graded-closedqa", "names Paris", "", "Yes, it does."}}},
	{"", []judgedAssert{{"factuality", "Paris", "", `{"category": " b ", "reason": "more"}`}}},
	{"", []judgedAssert{{"factuality", "Lyon", "", `{"category": "D", "reason": "no"}`}}},
	{"", []judgedAssert{{"factuality", "Paris", "", "(A) The submission is a subset."}}},
	{"", []judgedAssert{{"factuality", "Paris", "", "I pick e) since it differs harmlessly"}}},
	{"", []judgedAssert{{"model-graded-factuality", "Paris", "", `{"category": "a"}`}}},
	{"options: {factuality: {superset: 0.5, disagree: 0.25}}", []judgedAssert{{"factuality", "Paris", "", `{"category": "B"}`}}},
	{"options: {factuality: {superset: 0.5, disagree: 0.25}}", []judgedAssert{{"factuality", "Lyon", "", `{"category": "D"}`}}},
	{"options: {factuality: {agree: 0}}", []judgedAssert{{"factuality", "Paris", "", `{"category": "C"}`}}},
	{"", []judgedAssert{{"factuality", "Paris", "", `{"category": "F"}`}}},
	{"", []judgedAssert{{"factuality", "Paris", "", "It agrees."}}},
	{"", []judgedAssert{{"contains", "Paris", "weight: 2", ""}, {"llm-rubric", "is formal", "weight: 1", `{"pass": false, "score": 0.5}`}}},
	{"", []judgedAssert{{"contains", "Paris", "", ""}, {"llm-rubric", "is formal", "weight: 0", `{"pass": false, "score": 0}`}}},
	{"threshold: 0.5", []judgedAssert{{"contains", "Paris", "", ""}, {"llm-rubric", "is formal", "", `{"pass": false, "score": 0.2}`}}},
	{"threshold: 0.7", []judgedAssert{{"contains", "Paris", "", ""}, {"llm-rubric", "is formal", "", `{"pass": false, "score": 0.2}`}}},
	{"", []judgedAssert{{"llm-rubric", "is formal", "weight: 3", `{"pass": true, "score": 0.9}`}, {"model-graded-closedqa", "names France", "weight: 2", "France is named.\nY"}, {"factuality", "Paris is in France", "", `{"category": "A"}`}}},
	{"", []judgedAssert{{"llm-rubric", "is formal", "", `{"pass": true, "score": 0.9}`}, {"factuality", "Lyon", "", `{"category": "D"}`}}},
	{"", []judgedAssert{{"contains", "Lyon", "", ""}, {"model-graded-closedqa", "names Paris", "", "Correct.\nY"}}},
}

// caseToken marks each assertion's value: the grader's replies are looked
// up by it, in promptfoo's grader requests and benchline's judge requests
// alike.
var caseToken = regexp.MustCompile(`CASE(\d+)x`)

// judgedConfig is the comparison's promptfoo config; graderURL, when set,
// is every judged assertion's grader provider (promptfoo's run).
func judgedConfig(outURL, graderURL string) (string, []string) {
	var b strings.Builder
	fmt.Fprintf(&b, "prompts: ['Answer: {{q}}']\nproviders: [{id: 'openai:chat:out', config: {apiBaseUrl: '%s'}}]\ntests:\n", outURL)
	var replies []string
	for i, t := range judgedTests {
		fmt.Fprintf(&b, "  - description: t%d\n    vars: {q: 'question %d'}\n", i, i)
		if t.extra != "" {
			fmt.Fprintf(&b, "    %s\n", t.extra)
		}
		b.WriteString("    assert:\n")
		for _, a := range t.asserts {
			value := a.value
			keys := []string{"type: " + a.typ}
			if a.reply != "" {
				value = fmt.Sprintf("CASE%dx %s", len(replies), a.value)
				replies = append(replies, a.reply)
				if graderURL != "" {
					keys = append(keys, fmt.Sprintf("provider: {id: 'openai:chat:grader', config: {apiBaseUrl: '%s'}}", graderURL))
				}
			}
			keys = append(keys, fmt.Sprintf("value: '%s'", value))
			if a.extra != "" {
				keys = append(keys, a.extra)
			}
			fmt.Fprintf(&b, "      - {%s}\n", strings.Join(keys, ", "))
		}
	}
	return b.String(), replies
}

// graderReply is the fixed reply to a request whose text holds a case
// token.
func graderReply(replies []string, text string) (string, error) {
	m := caseToken.FindStringSubmatch(text)
	if m == nil {
		return "", fmt.Errorf("no case token in %q", text)
	}
	var i int
	fmt.Sscan(m[1], &i)
	return replies[i], nil
}

// caseGateway is benchline's judges in the comparison: the grader's reply
// to the case in the request.
type caseGateway struct{ replies []string }

func (g caseGateway) Complete(_ context.Context, req modelapi.Request) (modelapi.Response, error) {
	var text strings.Builder
	for _, m := range req.Messages {
		text.WriteString(m.Content)
	}
	r, err := graderReply(g.replies, text.String())
	if err != nil {
		return modelapi.Response{}, err
	}
	return modelapi.Response{Choices: []modelapi.Choice{{Content: r}}}, nil
}

// TestJudgedSameAsPromptfoo runs promptfoo 0.123.1 on a config of judged
// assertions (llm-rubric, not-llm-rubric, model-graded-closedqa,
// factuality with options, mixed with plain ones under weights and
// thresholds) whose grader is a local endpoint replying with a fixed
// reply per assertion (JSON verdicts, Y/N endings, categories, and
// malformed replies); benchline grades the same config with judges giving
// the same replies. Every test's pass and score equal promptfoo's, but
// where a grader reply is malformed: promptfoo fails the test with score
// 0 on it, benchline counts a judge error and gives no pass and score.
func TestJudgedSameAsPromptfoo(t *testing.T) {
	main := promptfooMain(t)
	_, replies := judgedConfig("", "")
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		var req openai.ChatCompletionRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		content := sameOutput
		if req.Model == "grader" {
			var text strings.Builder
			for _, m := range req.Messages {
				text.WriteString(m.Content)
			}
			var err error
			if content, err = graderReply(replies, text.String()); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
		}
		json.NewEncoder(w).Encode(map[string]any{
			"id": "x", "object": "chat.completion", "created": 0, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": content}}},
			"usage": map[string]any{"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
		})
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	dir := t.TempDir()
	pfConfig, _ := judgedConfig(srv.URL+"/v1", srv.URL+"/v1")
	if err := os.WriteFile(filepath.Join(dir, "promptfooconfig.yaml"), []byte(pfConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	results := runPromptfoo(t, main, dir)
	if len(results) != len(judgedTests) {
		t.Fatalf("promptfoo has %d results, want %d", len(results), len(judgedTests))
	}

	// benchline: the same config without the grader providers, translated,
	// and each sample scored with judges replying as the grader did.
	bcConfig, _ := judgedConfig(srv.URL+"/v1", "")
	cfg, err := Parse("judged.yaml", []byte(bcConfig), DirReader(dir))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := cfg.Translate("judged.rows.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	c, err := taskfile.Load("judged.task.yaml", tr.TaskFile)
	if err != nil {
		t.Fatal(err)
	}
	rows := bytes.Split(bytes.TrimSpace(tr.Rows), []byte("\n"))
	env := scorers.Env{Models: caseGateway{replies}, Judges: map[string]string{"judge": "x/grader"}}
	matched, absent, passes := 0, 0, 0
	for _, r := range results {
		var fields map[string]any
		if err := json.Unmarshal(rows[r.TestIdx], &fields); err != nil {
			t.Fatal(err)
		}
		j, err := c.ScoreJudged(context.Background(), env, []openai.ChatCompletionMessage{{Role: "user", Content: "q"}},
			taskfile.Row{ID: fmt.Sprint(fields["id"]), Fields: fields}, taskfile.Reply{Text: sameOutput})
		if err != nil {
			t.Fatalf("t%d: %v", r.TestIdx, err)
		}
		pass, hasPass := j.Metrics["pass"]
		score, hasScore := j.Metrics["score"]
		pf := r.GradingResult
		if !hasPass || !hasScore {
			// A judge error: promptfoo failed the test on the malformed reply.
			absent++
			if pf.Pass || j.Metrics[taskfile.MetricJudgeErrorRate] == 0 {
				t.Errorf("t%d: benchline has no pass/score (judge_error_rate %v), promptfoo pass=%v score=%v (%s)",
					r.TestIdx, j.Metrics[taskfile.MetricJudgeErrorRate], pf.Pass, pf.Score, pf.Reason)
			}
			continue
		}
		if (pass == 1) != pf.Pass || math.Abs(score-pf.Score) > 1e-9 {
			t.Errorf("t%d: benchline pass=%v score=%v (%v), promptfoo pass=%v score=%v (%s)",
				r.TestIdx, pass, score, j.Verdicts, pf.Pass, pf.Score, pf.Reason)
		}
		matched++
		if pf.Pass {
			passes++
		}
	}
	if absent != 4 || passes == 0 || passes == matched {
		t.Errorf("%d tests matched (%d passing), %d judge errors: want 4 judge errors and both verdicts", matched, passes, absent)
	}
	t.Logf("%d tests: %d with pass and score equal to promptfoo's (%d pass), %d malformed grader replies as judge errors", len(judgedTests), matched, passes, absent)
}
