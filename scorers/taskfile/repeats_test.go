package taskfile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/benchline/benchline/internal/modelapi"
	"github.com/benchline/benchline/internal/sandbox"
	"github.com/benchline/benchline/scorers"
)

// byIndex answers request i (its SampleIndex) with replies[i], or defers
// the indexes in deferred.
type byIndex struct {
	mu       sync.Mutex
	replies  []string
	deferred map[int]bool
	asked    []int
}

func (b *byIndex) Complete(_ context.Context, req modelapi.Request) (modelapi.Response, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.asked = append(b.asked, req.SampleIndex)
	if b.deferred[req.SampleIndex] {
		return modelapi.Response{}, fmt.Errorf("gateway: %w", modelapi.ErrDeferred)
	}
	if req.SampleIndex >= len(b.replies) {
		return modelapi.Response{}, fmt.Errorf("asked index %d", req.SampleIndex)
	}
	return modelapi.Response{Choices: []modelapi.Choice{{Content: b.replies[req.SampleIndex]}}}, nil
}

func repeatsSample(t *testing.T) scorers.Sample {
	t.Helper()
	d, err := decodeRow(&TaskRow{ID: "r1", Target: "42", MessagesJSON: `[{"role":"user","content":"6*7?"}]`, FieldsJSON: `{"answer":"42"}`})
	if err != nil {
		t.Fatal(err)
	}
	return scorers.Sample{ID: "r1", Row: d}
}

func TestRepeatsMean(t *testing.T) {
	cases := []struct {
		repeats  string
		replies  []string
		exact    float64
		includes float64
	}{
		{"", []string{"42"}, 1, 1},
		{"1", []string{"41"}, 0, 0},
		{"2", []string{"42", "The answer is 42"}, 0.5, 1},
		{"3", []string{"42", "41", "42"}, 2.0 / 3, 2.0 / 3},
		{"4", []string{"0", "1", "2", "3"}, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.repeats, func(t *testing.T) {
			src := base + "scorers:\n  - {type: exact_match, name: exact}\n  - {type: includes}\n"
			if tc.repeats != "" {
				src += "generation: {repeats: " + tc.repeats + "}\n"
			}
			c, err := Load("t.yaml", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			m := &byIndex{replies: tc.replies}
			out, err := NewTask(c).Evaluate(context.Background(), scorers.Env{Models: m, Model: "x/y"}, repeatsSample(t))
			if err != nil {
				t.Fatal(err)
			}
			if out.Metrics["exact"] != tc.exact || out.Metrics["includes"] != tc.includes {
				t.Errorf("metrics %v, want exact %v includes %v", out.Metrics, tc.exact, tc.includes)
			}
			if len(m.asked) != len(tc.replies) {
				t.Fatalf("asked %v, want %d distinct requests", m.asked, len(tc.replies))
			}
			for i, k := range m.asked {
				if k != i {
					t.Errorf("request %d has sample index %d: the cache would answer it as another", i, k)
				}
			}
			d := out.Details.(Details)
			if len(tc.replies) == 1 {
				if d.Replies != nil {
					t.Errorf("one reply: details list replies %+v", d.Replies)
				}
				return
			}
			if len(d.Replies) != len(tc.replies) {
				t.Fatalf("details list %d replies, want %d", len(d.Replies), len(tc.replies))
			}
			for i, r := range d.Replies {
				want := 0.0
				if tc.replies[i] == "42" {
					want = 1
				}
				if r.Response != tc.replies[i] || len(r.Verdicts) != 2 || r.Verdicts[0].Score != want {
					t.Errorf("reply %d: %+v, want %q with exact %v", i, r, tc.replies[i], want)
				}
			}
			if d.Verdicts[0].Score != tc.exact || !strings.Contains(d.Verdicts[0].Why, "mean over") {
				t.Errorf("sample verdict %+v, want the mean %v", d.Verdicts[0], tc.exact)
			}
		})
	}
}

// TestRepeatsDeferred: in batch mode every repeat is asked before the
// sample returns deferred, so all go in one batch round.
func TestRepeatsDeferred(t *testing.T) {
	c, err := Load("t.yaml", []byte(base+"scorers: [{type: exact_match}]\ngeneration: {repeats: 3}\n"))
	if err != nil {
		t.Fatal(err)
	}
	m := &byIndex{replies: []string{"42", "42", "42"}, deferred: map[int]bool{0: true, 1: true}}
	_, err = NewTask(c).Evaluate(context.Background(), scorers.Env{Models: m, Model: "x/y"}, repeatsSample(t))
	if !errors.Is(err, modelapi.ErrDeferred) {
		t.Fatalf("err %v, want deferred", err)
	}
	if len(m.asked) != 3 {
		t.Errorf("asked %v before deferring, want all 3 repeats", m.asked)
	}
}

// votes is a listScorer: it sees every reply of a sample.
type votes struct{ got *[]string }

func (votes) score(Reply, Row) (float64, string) { return -1, "scored alone" }
func (v votes) scoreList(rs []Reply, _ Row) (float64, string) {
	for _, r := range rs {
		*v.got = append(*v.got, r.Text)
	}
	return 0.25, "voted"
}

func TestRepeatsListScorer(t *testing.T) {
	c, err := Load("t.yaml", []byte(base+"scorers: [{type: exact_match, name: vote}, {type: exact_match}]\ngeneration: {repeats: 3}\n"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	c.scorers[0] = votes{&got}
	m, vs, each := c.ScoreReplies(Row{ID: "r", Target: "a"}, []Reply{{Text: "a"}, {Text: "b"}, {Text: "a"}})
	if m["vote"] != 0.25 || vs[0].Why != "voted" || strings.Join(got, ",") != "a,b,a" {
		t.Errorf("list scorer: metric %v, verdict %+v, saw %v; want 0.25 over a,b,a", m["vote"], vs[0], got)
	}
	if m["exact_match"] != 2.0/3 || len(each) != 3 {
		t.Errorf("exact_match %v over %d replies, want 2/3 over 3", m["exact_match"], len(each))
	}
}

func TestRepeatsBounds(t *testing.T) {
	for _, r := range []string{"-1", "65", "1000"} {
		_, err := Load("t.yaml", []byte(base+"scorers: [{type: exact_match}]\ngeneration: {repeats: "+r+"}\n"))
		if err == nil || !strings.Contains(err.Error(), "generation.repeats") {
			t.Errorf("repeats %s: %v, want an error naming generation.repeats", r, err)
		}
	}
}

// TestRepeatsSandbox: a code task asked twice stores both replies at
// generation, and Score (given the details back as JSON, as the engine
// does) runs each in the sandbox and averages.
func TestRepeatsSandbox(t *testing.T) {
	sb, err := sandbox.New(sandbox.Config{})
	if err != nil {
		t.Fatalf("sandbox unavailable: %v (make setup)", err)
	}
	t.Cleanup(func() { _ = sb.Close() })
	c, err := Load("t.yaml", []byte(strings.Replace(codeTask, "scorers:", "generation: {repeats: 2}\nscorers:", 1)))
	if err != nil {
		t.Fatal(err)
	}
	task := NewTaskWith(c, sb)
	d, err := decodeRow(&TaskRow{ID: "r", MessagesJSON: `[{"role":"user","content":"add"}]`,
		FieldsJSON: `{"lang":"python","tests":"assert add(2, 3) == 5","prelude":""}`})
	if err != nil {
		t.Fatal(err)
	}
	s := scorers.Sample{ID: "r", Row: d}
	m := &byIndex{replies: []string{"```python\ndef add(a, b):\n    return a + b\n```", "def add(a, b):\n    return a - b"}}
	out, err := task.Evaluate(context.Background(), scorers.Env{Models: m, Model: "x/y"}, s)
	if err != nil || len(out.Metrics) != 0 {
		t.Fatalf("Evaluate: %v, metrics %v; want generation only", err, out.Metrics)
	}
	b, _ := json.Marshal(out.Details)
	var stored any
	_ = json.Unmarshal(b, &stored)
	out.Details = stored
	scored, err := task.(scorers.DeferredScorer).Score(context.Background(), s, out)
	if err != nil {
		t.Fatal(err)
	}
	dt := scored.Details.(Details)
	if scored.Metrics["pass"] != 0.5 || len(dt.Replies) != 2 || dt.Replies[0].Verdicts[0].Status != CodeOK || dt.Replies[1].Verdicts[0].Status != CodeFailed {
		t.Errorf("pass %v, replies %+v; want 0.5, the first ok and the second failed", scored.Metrics["pass"], dt.Replies)
	}
	// Details that lost a reply are no verdict (infrastructure), not a 0.
	out.Details = map[string]any{"replies": []any{map[string]any{"response": "x"}}}
	if _, err := task.(scorers.DeferredScorer).Score(context.Background(), s, out); err == nil {
		t.Error("scored a sample whose details hold 1 of 2 replies")
	}
}
