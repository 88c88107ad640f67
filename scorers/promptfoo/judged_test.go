package promptfoo

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/internal/modelapi"
	"github.com/benchline/benchline/scorers"
	"github.com/benchline/benchline/scorers/taskfile"
)

// gateway is a fake model gateway: each judge model replies with a fixed
// text, and the requests are kept.
type gateway struct {
	replies map[string]string
	asked   []modelapi.Request
}

func (g *gateway) Complete(_ context.Context, req modelapi.Request) (modelapi.Response, error) {
	g.asked = append(g.asked, req)
	r, ok := g.replies[req.Model]
	if !ok {
		return modelapi.Response{}, fmt.Errorf("no judge %s", req.Model)
	}
	if r == "=oracle" {
		r = req.Oracle
	}
	return modelapi.Response{Choices: []modelapi.Choice{{Content: r}}}, nil
}

// judgeConfig translates config (a promptfoo config of one prompt and
// one test), and scores output to its sample with the fake judges.
func judgeConfig(t *testing.T, config string, replies map[string]string, output string) (taskfile.Judging, *gateway) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "c.yaml")
	cfg, err := Parse(file, []byte(config), DirReader(filepath.Dir(file)))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	tr, err := cfg.Translate("c.rows.jsonl")
	if err != nil {
		t.Fatalf("Translate: %v", err)
	}
	c, err := taskfile.Load("c.task.yaml", tr.TaskFile)
	if err != nil {
		t.Fatalf("Load: %v\n%s", err, tr.TaskFile)
	}
	line, _, _ := strings.Cut(string(tr.Rows), "\n")
	var fields map[string]any
	if err := json.Unmarshal([]byte(line), &fields); err != nil {
		t.Fatal(err)
	}
	var panel []string
	for m := range replies {
		panel = append(panel, m)
	}
	g := &gateway{replies: replies}
	env := scorers.Env{Models: g, Judges: map[string]string{"judge": strings.Join(sortedStrings(panel), ",")}}
	j, err := c.ScoreJudged(context.Background(), env, []openai.ChatCompletionMessage{{Role: "user", Content: "q"}},
		taskfile.Row{ID: "r", Fields: fields}, taskfile.Reply{Text: output})
	if err != nil {
		t.Fatalf("ScoreJudged: %v", err)
	}
	return j, g
}

func sortedStrings(xs []string) []string {
	out := append([]string(nil), xs...)
	for i := range out {
		for k := i + 1; k < len(out); k++ {
			if out[k] < out[i] {
				out[i], out[k] = out[k], out[i]
			}
		}
	}
	return out
}

const judgedHead = "prompts: ['Answer: {{q}}']\n"

// TestJudgedAsPromptfoo: each judged assertion reads a grader's reply as
// promptfoo 0.123's matchers do (runJsonGradingPrompt for llm-rubric,
// matchesClosedQa, matchesFactuality with buildFactualityResult), then
// its handler (not-llm-rubric inverts pass and clamps 1-score; weight 0
// passes) and runAssertions' weighted mean; the figures below follow that
// code by hand. A reply promptfoo calls malformed is a judge error here:
// the test's pass and score are absent, judge_error_rate counts it.
func TestJudgedAsPromptfoo(t *testing.T) {
	one := func(reply string) map[string]string { return map[string]string{"x/j": reply} }
	rubric := func(extra string) string {
		return judgedHead + "tests: [{vars: {q: a}, assert: [{type: llm-rubric, value: 'is polite'" + extra + "}]}]\n"
	}
	cases := []struct {
		name      string
		config    string
		replies   map[string]string
		output    string
		pass      float64
		score     float64
		absent    bool
		errorRate float64
	}{
		{"rubric pass", rubric(""), one(`{"reason": "fine", "pass": true, "score": 0.8}`), "hi", 1, 0.8, false, 0},
		{"rubric threshold", rubric(", threshold: 0.9"), one(`{"pass": true, "score": 0.8}`), "hi", 0, 0.8, false, 0},
		{"rubric threshold met", rubric(", threshold: 0.8"), one(`{"pass": true, "score": 0.8}`), "hi", 1, 0.8, false, 0},
		{"not-rubric", strings.Replace(rubric(""), "llm-rubric", "not-llm-rubric", 1), one(`{"pass": true, "score": 0.8}`), "hi", 0, 1 - 0.8, false, 0},
		{"not-rubric clamps", strings.Replace(rubric(""), "llm-rubric", "not-llm-rubric", 1), one(`{"pass": false, "score": 1.5}`), "hi", 1, 0, false, 0},
		{"rubric pass word", rubric(""), one(`I think {"pass": "Yes"} sums it up`), "hi", 1, 1, false, 0},
		{"rubric pass other word", rubric(""), one(`{"pass": "maybe", "score": "0.25"}`), "hi", 0, 0.25, false, 0},
		{"rubric no pass", rubric(""), one(`{"score": 0.4}`), "hi", 1, 0.4, false, 0},
		{"rubric null score", rubric(""), one(`{"pass": false, "score": null}`), "hi", 0, 0, false, 0},
		{"rubric score not a number", rubric(""), one(`{"pass": true, "score": "high"}`), "hi", 1, 1, false, 0},
		{"rubric yaml flow", rubric(""), one(`Verdict: {pass: false, score: 0.3, reason: rude}`), "hi", 0, 0.3, false, 0},
		{"rubric first object", rubric(""), one(`{"pass": false, "score": 0} then {"pass": true, "score": 1}`), "hi", 0, 0, false, 0},
		{"rubric malformed", rubric(""), one(`It is polite.`), "hi", 0, 0, true, 1},
		{"closedqa Y", judgedHead + "tests: [{vars: {q: a}, assert: [{type: model-graded-closedqa, value: 'says hi'}]}]\n", one("Step 1: it says hi.\nY\n\n"), "hi", 1, 1, false, 0},
		{"closedqa N", judgedHead + "tests: [{vars: {q: a}, assert: [{type: model-graded-closedqa, value: 'says hi'}]}]\n", one("No greeting.\nN"), "hi", 0, 0, false, 0},
		{"closedqa malformed", judgedHead + "tests: [{vars: {q: a}, assert: [{type: model-graded-closedqa, value: 'says hi'}]}]\n", one("Yes, it does."), "hi", 0, 0, true, 1},
		{"factuality B", judgedHead + "tests: [{vars: {q: a}, assert: [{type: factuality, value: 'Paris'}]}]\n", one(`{"category": " b ", "reason": "more"}`), "Paris, France", 1, 1, false, 0},
		{"factuality D", judgedHead + "tests: [{vars: {q: a}, assert: [{type: factuality, value: 'Paris'}]}]\n", one(`{"category": "D"}`), "Lyon", 0, 0, false, 0},
		{"factuality legacy", judgedHead + "tests: [{vars: {q: a}, assert: [{type: factuality, value: 'Paris'}]}]\n", one("(A) The submission is a subset."), "Paris", 1, 1, false, 0},
		{"factuality options", judgedHead + "defaultTest: {options: {factuality: {superset: 0.5, disagree: 0.25}}}\ntests: [{vars: {q: a}, assert: [{type: factuality, value: 'Paris'}]}]\n", one(`{"category": "B"}`), "Paris", 1, 0.5, false, 0},
		{"factuality option fails", judgedHead + "tests: [{vars: {q: a}, options: {factuality: {agree: 0}}, assert: [{type: factuality, value: 'Paris'}]}]\n", one(`{"category": "C"}`), "Paris", 0, 0, false, 0},
		{"factuality bad category", judgedHead + "tests: [{vars: {q: a}, assert: [{type: factuality, value: 'Paris'}]}]\n", one(`{"category": "F"}`), "Paris", 0, 0, true, 1},
		{"factuality malformed", judgedHead + "tests: [{vars: {q: a}, assert: [{type: factuality, value: 'Paris'}]}]\n", one("It agrees."), "Paris", 0, 0, true, 1},
		{"weights", judgedHead + "tests: [{vars: {q: a}, assert: [{type: contains, value: hi, weight: 2}, {type: llm-rubric, value: x, weight: 1}]}]\n", one(`{"pass": false, "score": 0.5}`), "hi", 0, (2*1 + 0.5*1) / 3.0, false, 0},
		{"weight 0", judgedHead + "tests: [{vars: {q: a}, assert: [{type: contains, value: hi}, {type: llm-rubric, value: x, weight: 0}]}]\n", one(`{"pass": false, "score": 0}`), "hi", 1, 1, false, 0},
		{"weight 0 judge error", judgedHead + "tests: [{vars: {q: a}, assert: [{type: contains, value: hi}, {type: llm-rubric, value: x, weight: 0}]}]\n", one("prose"), "hi", 1, 1, false, 1},
		{"test threshold", judgedHead + "tests: [{vars: {q: a}, threshold: 0.5, assert: [{type: contains, value: hi}, {type: llm-rubric, value: x}]}]\n", one(`{"pass": false, "score": 0.2}`), "hi", 1, 0.6, false, 0},
		{"rendered rubric", judgedHead + "tests: [{vars: {q: a, w: polite}, assert: [{type: llm-rubric, value: 'is {{w}}'}]}]\n", one(`{"pass": true, "score": 1}`), "hi", 1, 1, false, 0},
		{"panel majority", rubric(""), map[string]string{"x/a": `{"pass": true, "score": 1}`, "x/b": `{"pass": true, "score": 0.6}`, "x/c": `{"pass": false, "score": 0}`}, "hi", 1, 0.6, false, 0},
		{"panel tie fails", rubric(""), map[string]string{"x/a": `{"pass": true, "score": 1}`, "x/b": `{"pass": false, "score": 0.5}`}, "hi", 0, 0.75, false, 0},
		{"panel judge error", rubric(""), map[string]string{"x/a": `{"pass": true, "score": 1}`, "x/b": "prose", "x/c": `{"pass": false, "score": 0.5}`}, "hi", 0, 0.75, false, 1.0 / 3},
		{"panel all errors", rubric(""), map[string]string{"x/a": "prose", "x/b": "more prose"}, "hi", 0, 0, true, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j, _ := judgeConfig(t, tc.config, tc.replies, tc.output)
			pass, hasPass := j.Metrics["pass"]
			score, hasScore := j.Metrics["score"]
			if tc.absent {
				if hasPass || hasScore {
					t.Errorf("pass %v score %v, want both absent (judge errors only)", pass, score)
				}
			} else if !hasPass || !hasScore || pass != tc.pass || math.Abs(score-tc.score) > 1e-12 {
				t.Errorf("pass %v (%v) score %v (%v), want %v and %v; verdicts %+v", pass, hasPass, score, hasScore, tc.pass, tc.score, j.Verdicts)
			}
			if got := j.Metrics[taskfile.MetricJudgeErrorRate]; math.Abs(got-tc.errorRate) > 1e-12 {
				t.Errorf("judge_error_rate %v, want %v", got, tc.errorRate)
			}
		})
	}
}

// TestJudgedRecords: the judges are asked once per assertion and sample
// (the pass and score scorers share them), with the prompt version and
// an oracle; the audit records are kept with the judgement, a judge
// error's parse error among them.
func TestJudgedRecords(t *testing.T) {
	config := judgedHead + "tests: [{vars: {q: a}, assert: [{type: llm-rubric, value: 'says \"hi\"'}, {type: model-graded-closedqa, value: x}, {type: factuality, value: hi}]}]\n"
	j, g := judgeConfig(t, config, map[string]string{"x/a": "=oracle", "x/b": "prose"}, "hi there")
	// x/b's prose does not parse: asked twice, for each of 3 assertions.
	if len(g.asked) != 3*(1+2) {
		t.Fatalf("%d judge calls, want 9 (3 assertions; x/a once, x/b twice)", len(g.asked))
	}
	if len(j.Judgements) != 1 || len(j.Ratings) != 1 {
		t.Errorf("%d judgements, %d ratings: want one of each (pass and score share one judging)", len(j.Judgements), len(j.Ratings))
	}
	var recs int
	versions := map[string]bool{}
	for _, jm := range j.Judgements {
		for _, r := range jm.Judges {
			recs++
			versions[r.Verdict.PromptVersion] = true
			if r.Verdict.Judge == "x/b" && !strings.Contains(r.Verdict.Error, "unparseable") {
				t.Errorf("x/b's record has error %q, want the parse error", r.Verdict.Error)
			}
			if r.Verdict.Judge == "x/a" && (r.Verdict.Error != "" || len(r.Verdict.Parsed) == 0) {
				t.Errorf("x/a's record: error %q, parsed %s", r.Verdict.Error, r.Verdict.Parsed)
			}
		}
	}
	if recs != 6 {
		t.Errorf("%d audit records, want 6 (stored once, not per scorer)", recs)
	}
	for _, v := range []string{RubricPromptVersion, ClosedQAPromptVersion, FactualityPromptVersion} {
		if !versions[v] {
			t.Errorf("no record of prompt version %s: %v", v, versions)
		}
	}
	for _, req := range g.asked {
		if req.Oracle == "" {
			t.Errorf("a judge request without an oracle: %+v", req.Messages)
		}
	}
	// The oracle: "hi" quoted and in the output, "x" unquoted (so met),
	// and the expert answer "hi" in the output: all pass.
	if j.Metrics["pass"] != 1 || j.Metrics["score"] != 1 || j.Metrics[taskfile.MetricJudgeErrorRate] != 0.5 {
		t.Errorf("metrics %v, want pass 1, score 1, judge_error_rate 0.5", j.Metrics)
	}
}

// TestOracles: the baseline judges' replies parse as the judged
// assertions read them, and say what the rule says.
func TestOracles(t *testing.T) {
	r := &RubricReply{}
	if err := r.DecodeReply(rubricOracle(`mentions "Paris" and "Seine"`, "Paris is lovely")); err != nil || r.Pass || r.Score != 0.5 {
		t.Errorf("rubric oracle: %+v, %v; want fail with score 0.5", r, err)
	}
	q := &ClosedQAReply{}
	if err := q.DecodeReply(closedQAOracle(`says "hello"`, "hello you")); err != nil || !q.Meets {
		t.Errorf("closedqa oracle: %+v, %v; want Y", q, err)
	}
	for _, tc := range []struct{ expert, output, want string }{{"Paris", "It is Paris.", "C"}, {"Paris, France", "Paris", "A"}, {"Paris", "Lyon", "D"}, {"Paris", "", "D"}} {
		f := &FactualityReply{}
		if err := f.DecodeReply(factualityOracle(tc.expert, tc.output)); err != nil || f.Category != tc.want {
			t.Errorf("factuality oracle(%q, %q): %+v, %v; want %s", tc.expert, tc.output, f, err, tc.want)
		}
	}
}

// TestGraderReplyBound: a reply of braces costs bounded time: only the
// first MaxGraderStarts "{" are tried, so an object after them is not
// found (a judge error), one among them is.
func TestGraderReplyBound(t *testing.T) {
	obj := `{"pass": false, "score": 0.5}`
	var r RubricReply
	if err := r.DecodeReply(strings.Repeat("{", MaxGraderStarts-1) + " " + obj); err != nil || r.Pass || r.Score != 0.5 {
		t.Errorf("an object at the last start tried: %+v, %v", r, err)
	}
	if err := r.DecodeReply(strings.Repeat("{", MaxGraderStarts) + " " + obj); err == nil {
		t.Error("an object past the starts tried was found")
	}
	done := make(chan error, 1)
	go func() { done <- r.DecodeReply(strings.Repeat("{", 1<<20)) }()
	select {
	case err := <-done:
		if err == nil {
			t.Error("a reply of braces parsed")
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("a 1 MiB reply of braces is still being searched after 2 minutes")
	}
}

// TestContainsJSONBound: contains-json on an output of braces costs
// bounded time: after MaxJSONStarts "{" that begin no object the search
// stops (an object after them is not found, and the reason says so); an
// object before that bound is found.
func TestContainsJSONBound(t *testing.T) {
	obj := `{"a": 1}`
	test := func(out string) Result {
		return Grade(Test{Assert: []Assertion{{Type: "contains-json", Weight: 1}}}, Provider{}, Sample{}, Output{Text: out})
	}
	if r := test(strings.Repeat("{", MaxJSONStarts-1) + " " + obj); !r.Pass {
		t.Errorf("an object after %d braces: %+v, want found", MaxJSONStarts-1, r)
	}
	if r := test(strings.Repeat("{", MaxJSONStarts) + " " + obj); r.Pass || !strings.Contains(r.Reason, "stopped") {
		t.Errorf("an object after %d braces: %+v, want not found, the reason saying the search stopped", MaxJSONStarts, r)
	}
	if r := test(obj + strings.Repeat("{", 2*MaxJSONStarts)); !r.Pass {
		t.Errorf("an object before the braces: %+v, want found", r)
	}
	done := make(chan Result, 1)
	go func() { done <- test(strings.Repeat("{", 1<<20)) }()
	select {
	case r := <-done:
		if r.Pass {
			t.Error("an output of braces contains JSON")
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("contains-json on a 1 MiB output of braces is still searching after 2 minutes")
	}
}
