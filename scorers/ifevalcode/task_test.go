package ifevalcode_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	dsifevalcode "github.com/benchline/benchline/datasets/ifevalcode"
	"github.com/benchline/benchline/internal/modelapi"
	"github.com/benchline/benchline/internal/sandbox"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/scorers"
	"github.com/benchline/benchline/scorers/ifevalcode"
)

// taskSandbox returns the real sandbox, or FAILS when it is unavailable.
func taskSandbox(t testing.TB) *sandbox.Sandbox {
	t.Helper()
	sb, err := sandbox.New(sandbox.Config{})
	if err != nil {
		t.Fatalf("sandbox unavailable: %v\nInstall the toolchain with `make setup`.", err)
	}
	t.Cleanup(func() { _ = sb.Close() })
	return sb
}

// replyFunc answers one prompt (the user message).
type replyFunc func(prompt string) (string, error)

// fakeModels is a scorers.Completer that answers with reply and records the
// requests it got.
type fakeModels struct {
	reply replyFunc
	mu    sync.Mutex
	reqs  []modelapi.Request
}

func (f *fakeModels) Complete(_ context.Context, req modelapi.Request) (modelapi.Response, error) {
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	f.mu.Unlock()
	if len(req.Messages) != 1 {
		return modelapi.Response{}, errors.New("fake: want exactly one message")
	}
	text, err := f.reply(req.Messages[0].Content)
	if err != nil {
		return modelapi.Response{}, err
	}
	return modelapi.Response{Choices: []modelapi.Choice{{Content: text}}, Usage: modelapi.Usage{PromptTokens: 10, CompletionTokens: 20}}, nil
}

// referenceReplies answers every fixture prompt as baseline/reference does:
// from the references the task gives (an unknown prompt is an error).
func referenceReplies(t testing.TB, task *ifevalcode.Task, rows []schemas.IFEvalCodeItem) replyFunc {
	t.Helper()
	refs := map[string]string{}
	for i := range rows {
		for _, r := range scorers.ReferencesOf(task, sampleOf(&rows[i])) {
			refs[r.Messages[0].Content] = r.Content
		}
	}
	return func(prompt string) (string, error) {
		if c, ok := refs[prompt]; ok {
			return c, nil
		}
		return "", errors.New("fake: no reference for this prompt")
	}
}

func sampleOf(row *schemas.IFEvalCodeItem) scorers.Sample {
	return scorers.Sample{ID: row.ID, Category: row.ProgrammingLanguage, Row: row}
}

// throughEngine returns the outcome as ScoreShard hands it to Score: the
// Response kept, Details stored as JSON and decoded into an any.
func throughEngine(t testing.TB, o scorers.Outcome) scorers.Outcome {
	t.Helper()
	b, err := json.Marshal(o.Details)
	if err != nil {
		t.Fatal(err)
	}
	var details any
	if err := json.Unmarshal(b, &details); err != nil {
		t.Fatal(err)
	}
	return scorers.Outcome{Response: o.Response, Details: details, PromptHash: o.PromptHash}
}

func detailsOf(t testing.TB, o scorers.Outcome) ifevalcode.Details {
	t.Helper()
	d, ok := o.Details.(ifevalcode.Details)
	if !ok {
		t.Fatalf("details are %T, want ifevalcode.Details", o.Details)
	}
	return d
}

func TestTaskContract(t *testing.T) {
	task := ifevalcode.NewTask(nil, ifevalcode.Options{})
	if task.Dataset() != dsifevalcode.Name || task.ScoreQueue() != "sandbox" {
		t.Fatalf("dataset %q, score queue %q", task.Dataset(), task.ScoreQueue())
	}
	want := []string{"corr", "instr", "corr_en", "instr_en", "corr_zh", "instr_zh"}
	if got := task.Metrics(); !reflect.DeepEqual(got, want) {
		t.Fatalf("metrics %v, want %v (headline first)", got, want)
	}
}

// TestTaskReferences checks that the references are the prompts Evaluate
// sends, en then zh, each answered with the reference solution.
func TestTaskReferences(t *testing.T) {
	task := ifevalcode.NewTask(nil, ifevalcode.Options{})
	rows := fixtureItems(t)
	models := &fakeModels{reply: referenceReplies(t, task, rows)}
	for i := range rows {
		row := &rows[i]
		s := sampleOf(row)
		refs := task.References(s)
		if len(refs) != 2 {
			t.Fatalf("%s: %d references, want 2", row.ID, len(refs))
		}
		models.reqs = nil
		o, err := task.Evaluate(context.Background(), scorers.Env{Models: models, Model: "baseline/reference"}, s)
		if err != nil {
			t.Fatalf("%s: %v", row.ID, err)
		}
		if o.Metrics != nil {
			t.Fatalf("%s: Evaluate scored (%v); scoring is deferred", row.ID, o.Metrics)
		}
		if len(models.reqs) != 2 {
			t.Fatalf("%s: %d requests, want 2", row.ID, len(models.reqs))
		}
		for j, ql := range []string{"en", "zh"} {
			p, _ := ifevalcode.Prompt(*row, ql)
			if !reflect.DeepEqual(refs[j].Messages, models.reqs[j].Messages) || refs[j].Messages[0].Content != p {
				t.Fatalf("%s %s: reference messages %+v, sent %+v", row.ID, ql, refs[j].Messages, models.reqs[j].Messages)
			}
			if refs[j].Content != *row.ReferenceSolution {
				t.Fatalf("%s %s: reference content is not the reference solution", row.ID, ql)
			}
			if models.reqs[j].Model != "baseline/reference" {
				t.Fatalf("%s: request for model %q", row.ID, models.reqs[j].Model)
			}
		}
		if one, ok := task.Reference(s); !ok || !reflect.DeepEqual(one, refs[0]) {
			t.Fatalf("%s: Reference %+v, %v; want the English one", row.ID, one, ok)
		}
		d := detailsOf(t, o)
		if o.Response != *row.ReferenceSolution || len(d.Replies) != 2 || d.Replies[1].QuestionLanguage != "zh" ||
			d.Replies[1].Response != *row.ReferenceSolution || d.Language != row.ProgrammingLanguage {
			t.Fatalf("%s: outcome %+v", row.ID, o)
		}
		if o.Usage.Calls != 2 || o.Usage.PromptTokens != 20 || o.PromptHash == "" {
			t.Fatalf("%s: usage %+v, prompt hash %q", row.ID, o.Usage, o.PromptHash)
		}
	}
	noRef := rows[0]
	noRef.ReferenceSolution = nil
	if refs := scorers.ReferencesOf(task, sampleOf(&noRef)); len(refs) != 0 {
		t.Fatalf("an item without a reference solution has references %+v", refs)
	}
	if _, ok := task.Reference(sampleOf(&noRef)); ok {
		t.Fatal("an item without a reference solution has a reference")
	}
}

// TestTaskReferenceScoresFull evaluates every fixture with a model that
// answers the references, hands the outcome to Score the way the engine
// does (details through JSON), and expects every metric to be 1.
func TestTaskReferenceScoresFull(t *testing.T) {
	task := ifevalcode.NewTask(taskSandbox(t), ifevalcode.Options{})
	rows := fixtureItems(t)
	if len(rows) != 24 {
		t.Fatalf("%d fixture items, want 24", len(rows))
	}
	env := scorers.Env{Models: &fakeModels{reply: referenceReplies(t, task, rows)}, Model: "baseline/reference"}
	for i := range rows {
		row := &rows[i]
		t.Run(row.ID, func(t *testing.T) {
			t.Parallel()
			s := sampleOf(row)
			o, err := task.Evaluate(context.Background(), env, s)
			if err != nil {
				t.Fatal(err)
			}
			scored, err := task.Score(context.Background(), s, throughEngine(t, o))
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range task.Metrics() {
				if v, ok := scored.Metrics[m]; !ok || v != 1 {
					t.Errorf("%s = %v (present %v), want 1; details %+v", m, v, ok, scored.Details)
				}
			}
			d := detailsOf(t, scored)
			for _, r := range d.Replies {
				if r.Verdict == nil || r.Verdict.Status != ifevalcode.StatusOK || r.Verdict.Detail != "" || r.Response != *row.ReferenceSolution {
					t.Errorf("%s reply: %+v", r.QuestionLanguage, r)
				}
			}
			if scored.ModelError != "" || scored.Response != *row.ReferenceSolution {
				t.Errorf("outcome %+v", scored)
			}
		})
	}
}

// TestTaskBrokenReplies scores replies that break a check in one question
// language and answer the reference in the other.
func TestTaskBrokenReplies(t *testing.T) {
	task := ifevalcode.NewTask(taskSandbox(t), ifevalcode.Options{Timeouts: map[string]time.Duration{"python": 2 * time.Second}})
	rows := map[string]*schemas.IFEvalCodeItem{}
	items := fixtureItems(t)
	for i := range items {
		rows[items[i].ID] = &items[i]
	}
	variant := func(id, file string) string {
		b, err := os.ReadFile(filepath.Join("testdata", "variants", id, file))
		if err != nil {
			t.Fatal(err)
		}
		return "```" + fence[rows[id].ProgrammingLanguage] + "\n" + string(b) + "```"
	}
	tests := []struct {
		name      string
		id        string
		broken    string // the reply to the broken question language
		brokenQL  string // "en" or "zh"
		correct   bool   // of the broken reply
		instr     bool   // of the broken reply
		status    ifevalcode.Status
		corrStat  ifevalcode.Status
		detailHas string
	}{
		{"bug in the en reply", "python_1", variant("python_1", "bug.py"), "en", false, true, ifevalcode.StatusFailed, ifevalcode.StatusFailed, "correctness: exit 1"},
		{"violation in the zh reply", "python_1", variant("python_1", "violation.py"), "zh", true, false, ifevalcode.StatusFailed, ifevalcode.StatusOK, "instruction: "},
		// The compile variant also has no for loop, which cpp_1 requires.
		{"compile error in the zh reply", "cpp_1", variant("cpp_1", "compile.cpp"), "zh", false, false, ifevalcode.StatusCompileError, ifevalcode.StatusCompileError, "instruction: exit 1: AssertionError: a for loop is required"},
		// The loop also breaks python_1's no-loops and recursion rules.
		{"timeout in the en reply", "python_1", "```python\ndef sum_of_squares(n):\n    while True:\n        pass\n```", "en", false, false, ifevalcode.StatusTimeout, ifevalcode.StatusTimeout, "limit of 2s"},
		{"empty en reply", "shell_1", "", "en", false, false, ifevalcode.StatusFailed, ifevalcode.StatusFailed, "correctness: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			row := rows[tc.id]
			brokenPrompt, _ := ifevalcode.Prompt(*row, tc.brokenQL)
			models := &fakeModels{reply: func(prompt string) (string, error) {
				if prompt == brokenPrompt {
					return tc.broken, nil
				}
				return *row.ReferenceSolution, nil
			}}
			s := sampleOf(row)
			o, err := task.Evaluate(context.Background(), scorers.Env{Models: models, Model: "test/broken"}, s)
			if err != nil {
				t.Fatal(err)
			}
			scored, err := task.Score(context.Background(), s, throughEngine(t, o))
			if err != nil {
				t.Fatal(err)
			}
			okQL := map[string]string{"en": "zh", "zh": "en"}[tc.brokenQL]
			want := map[string]float64{
				"corr_" + tc.brokenQL: b2f(tc.correct), "instr_" + tc.brokenQL: b2f(tc.instr),
				"corr_" + okQL: 1, "instr_" + okQL: 1,
				"corr": (b2f(tc.correct) + 1) / 2, "instr": (b2f(tc.instr) + 1) / 2,
			}
			if !reflect.DeepEqual(scored.Metrics, want) {
				t.Fatalf("metrics %v, want %v", scored.Metrics, want)
			}
			var broken, fine *ifevalcode.Reply
			for i, r := range detailsOf(t, scored).Replies {
				if r.QuestionLanguage == tc.brokenQL {
					broken = &detailsOf(t, scored).Replies[i]
				} else {
					fine = &detailsOf(t, scored).Replies[i]
				}
			}
			v := broken.Verdict
			if v == nil || v.Status != tc.status || v.CorrectnessStatus != tc.corrStat || !strings.Contains(v.Detail, tc.detailHas) || broken.Response != tc.broken {
				t.Fatalf("broken reply %+v (verdict %+v); want status %s, correctness %s, detail containing %q", broken, v, tc.status, tc.corrStat, tc.detailHas)
			}
			if fine.Verdict == nil || fine.Verdict.Status != ifevalcode.StatusOK {
				t.Fatalf("reference reply %+v", fine)
			}
			if scored.ModelError != "" {
				t.Fatalf("a wrong answer is scored, not a model error: %q", scored.ModelError)
			}
			t.Logf("%s: %s", tc.brokenQL, v.Detail)
		})
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// TestTaskScoreInfrastructure checks that what says nothing about the
// model is an error (retried, never scored), not metrics.
func TestTaskScoreInfrastructure(t *testing.T) {
	rows := fixtureItems(t)
	row := &rows[0]
	s := sampleOf(row)
	generated := throughEngine(t, scorers.Outcome{Response: *row.ReferenceSolution, Details: ifevalcode.Details{
		Language: row.ProgrammingLanguage, Replies: []ifevalcode.Reply{
			{QuestionLanguage: "en", Response: *row.ReferenceSolution}, {QuestionLanguage: "zh", Response: *row.ReferenceSolution}}}})
	sb := taskSandbox(t)
	tests := []struct {
		name    string
		task    *ifevalcode.Task
		outcome scorers.Outcome
		check   func(error) bool
		want    string
	}{
		{"no sandbox on this worker", ifevalcode.NewTask(nil, ifevalcode.Options{}), generated,
			func(err error) bool { return strings.Contains(err.Error(), "no sandbox") }, "an error saying the worker has no sandbox"},
		{"sandbox failure", ifevalcode.NewTask(failingSandbox{sb}, ifevalcode.Options{}), generated,
			sandbox.IsInfrastructure, "an error matching sandbox.ErrInfrastructure"},
		{"outcome without its replies", ifevalcode.NewTask(sb, ifevalcode.Options{}), scorers.Outcome{Response: *row.ReferenceSolution},
			func(err error) bool { return strings.Contains(err.Error(), "0 replies") }, "an error about the stored replies"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, err := tc.task.Score(context.Background(), s, tc.outcome)
			if err == nil || !tc.check(err) {
				t.Fatalf("error %v; want %s", err, tc.want)
			}
			if o.Metrics != nil {
				t.Fatalf("an infrastructure failure was scored: %v", o.Metrics)
			}
		})
	}
}

// TestTaskEvaluateModelError checks that a failed model call is returned
// (the engine classifies it) rather than scored.
func TestTaskEvaluateModelError(t *testing.T) {
	rows := fixtureItems(t)
	boom := errors.New("boom")
	task := ifevalcode.NewTask(nil, ifevalcode.Options{})
	_, err := task.Evaluate(context.Background(), scorers.Env{Models: &fakeModels{reply: func(string) (string, error) { return "", boom }}}, sampleOf(&rows[0]))
	if !errors.Is(err, boom) {
		t.Fatalf("error %v, want the model's", err)
	}
	_, err = task.Evaluate(context.Background(), scorers.Env{Models: &fakeModels{}}, scorers.Sample{ID: "x", Row: "not a row"})
	if err == nil {
		t.Fatal("a sample whose row is not an IFEvalCodeItem evaluated")
	}
}

func TestPrompt(t *testing.T) {
	it := schemas.IFEvalCodeItem{EnglishQuestion: "Q", ChineseQuestion: "问"}
	en, _ := ifevalcode.Prompt(it, "en")
	zh, _ := ifevalcode.Prompt(it, "zh")
	if !strings.HasPrefix(en, "Q\n\nNote that") || !strings.HasSuffix(en, "in the first code block.") ||
		!strings.HasPrefix(zh, "问\n\n注意") || !strings.HasSuffix(zh, "完整代码。") {
		t.Errorf("prompts: %q %q", en, zh)
	}
	if _, err := ifevalcode.Prompt(it, "fr"); err == nil {
		t.Error("want an error for an unknown question language")
	}
}
