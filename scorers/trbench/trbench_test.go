package trbench_test

import (
	"context"
	"encoding/json"
	"flag"
	"testing"

	"github.com/benchline/benchline/internal/golden"
	"github.com/benchline/benchline/internal/modelapi"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/scorers"
	"github.com/benchline/benchline/scorers/trbench"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestParseChoice(t *testing.T) {
	tests := []struct {
		name, text, want, how string
	}{
		{"strict 1", "<choice>\n1\n</choice>", "1", trbench.ParsedStrict},
		{"strict 2 after reasoning", "Reply 2 passes the year.\n<choice>\n2\n</choice>", "2", trbench.ParsedStrict},
		{"out of range", "<choice>3</choice>", "", trbench.ParsedNone},
		{"strict out of range", "<choice>\n3\n</choice>", "", trbench.ParsedNone},
		{"no tag", "I prefer the first reply.", "", trbench.ParsedNone},
		{"empty", "", "", trbench.ParsedNone},
		{"loose fallback", "<choice>2</choice>", "2", trbench.ParsedLoose},
		{"loose with spaces", "<choice> 1 </choice>", "1", trbench.ParsedLoose},
		{"strict wins over an earlier loose block", "<choice>1</choice> no wait <choice>\n2\n</choice>", "2", trbench.ParsedStrict},
		{"a strict block with a bad value does not fall back", "<choice>\n1 or 2\n</choice> <choice>1</choice>", "", trbench.ParsedNone},
		{"first strict block wins", "<choice>\n1\n</choice>\n<choice>\n2\n</choice>", "1", trbench.ParsedStrict},
		{"unclosed", "<choice>\n1\n", "", trbench.ParsedNone},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, how := trbench.ParseChoice(tc.text)
			if got != tc.want || how != tc.how {
				t.Errorf("ParseChoice(%q) = %q, %s; want %q, %s", tc.text, got, how, tc.want, tc.how)
			}
		})
	}
	if got := trbench.ParseChoiceStrict("<choice>2</choice>"); got != "" {
		t.Errorf("strict-only parse of a loose block = %q, want none", got)
	}
	if got := trbench.ParseChoiceStrict("<choice>\n2\n</choice>"); got != "2" {
		t.Errorf("strict-only parse = %q, want 2", got)
	}
}

func TestWAvg(t *testing.T) {
	tests := []struct {
		name   string
		o1, o2 []float64
		want   float64
	}{
		{"benchmarks.md example", []float64{1, 1, 0, 1}, []float64{1, 0, 0, 1}, 0.5},
		{"all right", []float64{1, 1}, []float64{1, 1}, 1},
		{"always first", []float64{1, 1, 1}, []float64{0, 0, 0}, 0},
		{"empty", nil, nil, 0},
	}
	for _, tc := range tests {
		if got := trbench.WAvg(tc.o1, tc.o2); got != tc.want {
			t.Errorf("%s: WAvg = %v, want %v", tc.name, got, tc.want)
		}
	}
	for _, tc := range []struct {
		c, r float64
		want bool
	}{{0.9, 0.1, true}, {0.5, 0.5, false}, {-1, 2, false}} {
		if got := trbench.ScalarCorrect(tc.c, tc.r); got != tc.want {
			t.Errorf("ScalarCorrect(%v, %v) = %v", tc.c, tc.r, got)
		}
	}
}

func TestCritiquePromptGolden(t *testing.T) {
	sys, err := trbench.SystemWithTools(`[{"name": "timer.start", "description": "Start a timer.", "parameters": {"type": "dict", "properties": {"minutes": {"type": "integer", "description": "Minutes."}}, "required": ["minutes"]}}]`)
	if err != nil {
		t.Fatal(err)
	}
	got := trbench.CritiquePrompt([]trbench.Message{{Role: "system", Content: sys}, {Role: "user", Content: "Set a 10 minute timer."}},
		"<tool_call>\n{\"name\": \"timer.start\", \"arguments\": {\"minutes\": 10}}\n</tool_call>", "")
	const path = "testdata/critique_prompt.golden.txt"
	golden.Check(t, path, got, *update, "")
}

// judge is a fake gateway: it answers every request with answer(prompt).
type judge struct {
	answer func(prompt string) string
	calls  int
}

func (j *judge) Complete(_ context.Context, req modelapi.Request) (modelapi.Response, error) {
	j.calls++
	return modelapi.Response{Choices: []modelapi.Choice{{Content: j.answer(req.Messages[len(req.Messages)-1].Content)}},
		Usage: modelapi.Usage{PromptTokens: 100, CompletionTokens: 5}}, nil
}

func samples() []scorers.Sample {
	var out []scorers.Sample
	for i, src := range []string{"simple_python", "parallel", "multiple"} {
		r := &schemas.TRBenchPair{PairID: src + "/p", RawID: src + "_0", TaskSource: src,
			PromptOrder1: "judge pair " + src + " in order A", GroundTruthOrder1: "1",
			PromptOrder2: "judge pair " + src + " in order B", GroundTruthOrder2: "2"}
		if i == 2 { // a pair whose order 1 has the chosen reply second
			r.GroundTruthOrder1, r.GroundTruthOrder2 = "2", "1"
		}
		out = append(out, scorers.Sample{ID: r.PairID, Category: src, Row: r})
	}
	return out
}

func TestTaskBaselineJudges(t *testing.T) {
	// The reference judge answers from References: the right verdict of
	// each order, looked up by prompt.
	refs := map[string]string{}
	for _, s := range samples() {
		rs, ok := trbench.References(s)
		if !ok || len(rs) != 2 {
			t.Fatalf("References(%s) = %v, %v", s.ID, rs, ok)
		}
		for _, r := range rs {
			refs[r.Messages[0].Content] = r.Content
		}
	}
	tests := []struct {
		name   string
		answer func(string) string
		want   map[string]float64 // mean of each metric over the samples
	}{
		{"baseline/first", func(string) string { return "<choice>\n1\n</choice>" },
			// always position 1: never the same answer twice
			map[string]float64{"w_avg": 0, "acc_order1": 2.0 / 3, "acc_order2": 1.0 / 3, "avg": 0.5, "consistency": 0}},
		{"baseline/second", func(string) string { return "<choice>\n2\n</choice>" },
			map[string]float64{"w_avg": 0, "acc_order1": 1.0 / 3, "acc_order2": 2.0 / 3, "avg": 0.5, "consistency": 0}},
		{"reference", func(p string) string { return refs[p] },
			map[string]float64{"w_avg": 1, "acc_order1": 1, "acc_order2": 1, "avg": 1, "consistency": 1}},
		{"reference, loose format", func(p string) string { return "Reply is better: " + refs[p][:8] + refs[p][9:10] + "</choice>" },
			map[string]float64{"w_avg": 1, "acc_order1": 1, "acc_order2": 1, "avg": 1}},
		{"no verdict", func(string) string { return "Both are fine." },
			map[string]float64{"w_avg": 0, "acc_order1": 0, "acc_order2": 0, "avg": 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j := &judge{answer: tc.answer}
			env := scorers.Env{Models: j, Model: "test/" + tc.name}
			sum := map[string]float64{}
			ss := samples()
			for _, s := range ss {
				o, err := trbench.Task{}.Evaluate(context.Background(), env, s)
				if err != nil {
					t.Fatal(err)
				}
				want := len(trbench.Task{}.Metrics())
				if tc.name == "no verdict" {
					want-- // no consistency without both verdicts
					if _, ok := o.Metrics["consistency"]; ok {
						t.Errorf("consistency %v without a verdict", o.Metrics["consistency"])
					}
				}
				if len(o.Metrics) != want {
					t.Fatalf("metrics %v", o.Metrics)
				}
				for k, v := range o.Metrics {
					sum[k] += v
				}
				b, err := json.Marshal(o.Details)
				if err != nil {
					t.Fatal(err)
				}
				if got, want := trbench.ItemOf(schemas.ResultRow{SampleID: s.ID, DetailsJSON: string(b)}), s.Row.(*schemas.TRBenchPair).RawID; got != want {
					t.Errorf("ItemOf = %q, want the pair's item %q", got, want)
				}
				if o.Usage.PromptTokens != 200 {
					t.Errorf("usage %+v, want both calls counted", o.Usage)
				}
				if unparseable := o.ModelError == "unparseable"; unparseable != (tc.name == "no verdict") {
					t.Errorf("model error %q", o.ModelError)
				}
			}
			for k, want := range tc.want {
				if got := sum[k] / float64(len(ss)); abs(got-want) > 1e-9 {
					t.Errorf("%s = %v, want %v", k, got, want)
				}
			}
			if j.calls != 2*len(ss) {
				t.Errorf("%d calls, want 2 per pair", j.calls)
			}
		})
	}
	// Reference (the engine's one-per-sample contract) is the order-1 verdict.
	s := samples()[2]
	ref, ok := trbench.Task{}.Reference(s)
	if !ok || ref.Messages[0].Content != "judge pair multiple in order A" || ref.Content != "<choice>\n2\n</choice>" {
		t.Errorf("Reference = %+v", ref)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func TestItemOf(t *testing.T) {
	tests := []struct{ name, details, want string }{
		{"details with the item", `{"raw_id":"simple_python_3","verdicts":[]}`, "simple_python_3"},
		{"no details (an infrastructure failure)", "", ""},
		{"details recorded before the item was", `{"verdicts":[]}`, ""},
		{"not JSON", `{"raw_id"`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := trbench.ItemOf(schemas.ResultRow{SampleID: "p/0", DetailsJSON: tc.details}); got != tc.want {
				t.Fatalf("ItemOf = %q, want %q", got, tc.want)
			}
		})
	}
}
