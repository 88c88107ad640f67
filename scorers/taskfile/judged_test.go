package taskfile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/internal/judge"
	"github.com/benchline/benchline/internal/modelapi"
	"github.com/benchline/benchline/scorers"
)

// judges is a fake gateway: each judge model answers with a function of
// the request (its oracle, a fixed text...).
type judges map[string]func(req modelapi.Request) string

func (j judges) Complete(_ context.Context, req modelapi.Request) (modelapi.Response, error) {
	f, ok := j[req.Model]
	if !ok {
		return modelapi.Response{}, fmt.Errorf("no judge %s", req.Model)
	}
	return modelapi.Response{Choices: []modelapi.Choice{{Content: f(req)}}}, nil
}

func oracle(req modelapi.Request) string { return req.Oracle }

func fixed(s string) func(modelapi.Request) string { return func(modelapi.Request) string { return s } }

var prompt = []openai.ChatCompletionMessage{{Role: "user", Content: "Q: capital of France?"}}

// judgeTask compiles base with scorers and scores reply to row with the
// run's judges.
func judgeTask(t *testing.T, scorersYAML string, runJudges map[string]string, fake judges, row Row, reply string) Judging {
	t.Helper()
	c := compileScorers(t, scorersYAML)
	j, err := c.ScoreJudged(context.Background(), scorers.Env{Models: fake, Judges: runJudges}, prompt, row, Reply{Text: reply})
	if err != nil {
		t.Fatalf("ScoreJudged: %v", err)
	}
	return j
}

const rubricYAML = `  - type: rubric
    name: quality
    criteria:
      - {id: capital, category: essential, text: names Paris, keywords: [Paris]}
      - {id: country, category: important, text: names France, keywords: [France]}
      - {id: extra, category: highlight, text: says it is on the Seine, keywords: [Seine]}
      - {id: wrong, category: pitfall, text: names Lyon as the capital, keywords: [Lyon]}
`

func TestRubricScore(t *testing.T) {
	row := Row{ID: "r1", Target: "Paris", Fields: map[string]any{}}
	cases := []struct {
		name  string
		yaml  string
		reply string
		want  float64
	}{
		// essential 3 + important 2 + highlight 1: the weights as medrubric's defaults.
		{"every positive met", rubricYAML, "Paris, France, on the Seine", 1},
		{"essential and important met", rubricYAML, "Paris, France", 5.0 / 6},
		{"essential only", rubricYAML, "Paris", 3.0 / 6},
		{"a met pitfall trips the breaker to 0", rubricYAML, "Paris, France, on the Seine; or Lyon", 0},
		{"breaker cap", strings.Replace(rubricYAML, "name: quality", "name: quality\n    breaker: cap\n    cap: 0.25", 1), "Paris, France, Seine, Lyon", 0.25},
		{"breaker subtract", strings.Replace(rubricYAML, "name: quality", "name: quality\n    breaker: subtract", 1), "Paris, France, Seine, Lyon", 3.0 / 6},
		{"explicit weights", `  - type: rubric
    name: quality
    criteria:
      - {category: essential, text: a, keywords: [Paris], weight: 1}
      - {category: essential, text: b, keywords: [France], weight: 3}
`, "France", 0.75},
		{"without keywords the target decides", `  - type: rubric
    name: quality
    criteria: [{category: essential, text: right answer}]
`, "It is Paris.", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := judgeTask(t, tc.yaml, nil, judges{DefaultJudge: oracle}, row, tc.reply)
			if got, ok := j.Metrics["quality"]; !ok || math.Abs(got-tc.want) > 1e-9 {
				t.Fatalf("quality = %v (%v), want %v; metrics %v", got, ok, tc.want, j.Metrics)
			}
			if j.Metrics[MetricJudgeErrorRate] != 0 {
				t.Errorf("judge_error_rate = %v, want 0", j.Metrics[MetricJudgeErrorRate])
			}
		})
	}
}

// TestJudgeRecords: every call's prompt version, reply and parsed verdict
// are kept; a reply that does not parse is a judge error, counted, and the
// score comes from the judges that answered, never a 0.
func TestJudgeRecords(t *testing.T) {
	row := Row{ID: "r1", Target: "Paris", Fields: map[string]any{}}
	fake := judges{"x/good": oracle, "x/garbage": fixed("I think it is fine.")}
	j := judgeTask(t, rubricYAML, map[string]string{"judge": "x/garbage,x/good"}, fake, row, "Paris, France, Seine")
	if len(j.Judgements) != 1 {
		t.Fatalf("judgements: %d", len(j.Judgements))
	}
	jm := j.Judgements[0]
	if len(jm.Judges) != 2 {
		t.Fatalf("records: %d", len(jm.Judges))
	}
	bad, good := jm.Judges[0].Verdict, jm.Judges[1].Verdict // the panel sorted: garbage, good
	if bad.Judge != "x/garbage" || bad.Error == "" || bad.Parsed != nil || bad.Attempts != judge.MaxAttempts || bad.Reply != "I think it is fine." {
		t.Errorf("garbage record: %+v", bad)
	}
	if good.PromptVersion != RubricPromptVersion || good.Error != "" || len(good.Parsed) == 0 || !strings.Contains(good.Reply, `"verdicts"`) {
		t.Errorf("good record: %+v", good)
	}
	if jm.JudgeErrors != 4 || j.Metrics[MetricJudgeErrorRate] != 0.5 {
		t.Errorf("judge errors %d, rate %v: want 4 and 0.5", jm.JudgeErrors, j.Metrics[MetricJudgeErrorRate])
	}
	if j.Metrics["quality"] != 1 {
		t.Errorf("quality = %v, want 1 (from the judge that answered)", j.Metrics["quality"])
	}
	if len(j.Ratings) != 1 || j.Ratings[0].Set != "quality" || len(j.Ratings[0].Items) != 4 || j.Ratings[0].Items[0][0] != "" {
		t.Errorf("ratings: %+v", j.Ratings)
	}

	// Every judge garbage: no score (the metric absent), every label an error.
	j = judgeTask(t, rubricYAML, map[string]string{"judge": "x/garbage"}, fake, row, "Paris")
	if v, ok := j.Metrics["quality"]; ok {
		t.Errorf("quality = %v with no verdict: want absent", v)
	}
	if j.Metrics[MetricJudgeErrorRate] != 1 || !strings.Contains(j.Verdicts[0].Why, "judge error") {
		t.Errorf("metrics %v, verdict %+v", j.Metrics, j.Verdicts[0])
	}
	raw, err := json.Marshal(Details{Judgements: j.Judgements, Ratings: j.Ratings})
	if err != nil {
		t.Fatal(err)
	}
	if rs, err := judge.RatingsOf(string(raw)); err != nil || len(rs) != 1 {
		t.Errorf("RatingsOf the details: %v, %v", rs, err)
	}
}

func TestPanelResolution(t *testing.T) {
	row := Row{ID: "r1", Target: "Paris", Fields: map[string]any{}}
	allMet := `{"verdicts":[{"id":"capital","met":true,"reason":""},{"id":"country","met":true,"reason":""},{"id":"extra","met":true,"reason":""},{"id":"wrong","met":true,"reason":""}]}`
	noneMet := strings.ReplaceAll(allMet, "true", "false")
	fake := judges{"a/yes": fixed(allMet), "b/no": fixed(noneMet), "c/no": fixed(noneMet)}
	cases := []struct {
		name   string
		judges string
		want   float64
		unan   float64
	}{
		// Two to one: the majority's "not met" everywhere.
		{"majority", "a/yes,b/no,c/no", 0, 0},
		// A tie: not met for positives, met for the pitfall (medrubric's conservative labels).
		{"tie", "a/yes,b/no", 0, 0},
		{"unanimous", "b/no,c/no", 0, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := judgeTask(t, rubricYAML, map[string]string{"judge": tc.judges}, fake, row, "x")
			if j.Metrics["quality"] != tc.want || j.Metrics[MetricPanelUnanimous] != tc.unan {
				t.Errorf("metrics %v", j.Metrics)
			}
		})
	}
	j := judgeTask(t, rubricYAML, map[string]string{"judge": "a/yes,b/no"}, fake, row, "x")
	items := j.Judgements[0].Items
	if !items[0].Tie || items[0].Label != "not_met" || items[3].Label != "met" {
		t.Errorf("tie resolution: %+v", items)
	}
	if j.Metrics["quality_tripped"] != 1 {
		t.Errorf("a tied pitfall trips the breaker: %v", j.Metrics)
	}
}

func TestPanelOf(t *testing.T) {
	cases := []struct {
		name    string
		run     map[string]string
		def     []string
		want    string
		wantErr bool
	}{
		{"default judge", nil, nil, DefaultJudge, false},
		{"task file's panel", nil, []string{"baseline/judge-yes", "baseline/judge"}, "baseline/judge,baseline/judge-yes", false},
		{"the run's panel wins", map[string]string{"judge": "x/b, x/a"}, []string{"baseline/judge"}, "x/a,x/b", false},
		{"repeats dropped", map[string]string{"judge": "x/a,x/a"}, nil, "x/a", false},
		{"another role", map[string]string{"checker": "x/a"}, nil, "", true},
		{"too many", map[string]string{"judge": "x/1,x/2,x/3,x/4,x/5,x/6,x/7,x/8,x/9"}, nil, "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := panelOf(tc.run, tc.def)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v", err)
			}
			if err == nil && strings.Join(p, ",") != tc.want {
				t.Errorf("panel %v, want %s", p, tc.want)
			}
		})
	}
	c := compileScorers(t, rubricYAML)
	_, err := c.ScoreJudged(context.Background(), scorers.Env{Judges: map[string]string{"proposer": "x/a"}}, prompt, Row{}, Reply{})
	if !errors.Is(err, scorers.ErrBadSample) {
		t.Errorf("a role the task cannot use: %v, want ErrBadSample", err)
	}
}

func TestScale(t *testing.T) {
	row := Row{ID: "r1", Target: "Paris", Fields: map[string]any{"question": "capital?"}}
	yaml := `  - type: scale
    name: quality
    min: 1
    max: 5
    prompt: "Question: {{ question }}\nReference: {{ target }}\nAnswer: {{ reply }}\nScore the answer."
`
	cases := []struct {
		name   string
		judges string
		fake   judges
		want   float64
		errs   float64
		absent bool
	}{
		{"oracle: top", "x/o", judges{"x/o": oracle}, 1, 0, false},
		{"median of three", "x/a,x/b,x/c", judges{"x/a": fixed(`{"score":2,"reason":""}`), "x/b": fixed(`{"score":4,"reason":""}`), "x/c": fixed(`{"score":5,"reason":""}`)}, 0.75, 0, false},
		{"mean of the middle two", "x/a,x/b", judges{"x/a": fixed(`{"score":2,"reason":""}`), "x/b": fixed(`{"score":3,"reason":""}`)}, 0.375, 0, false},
		{"out of the scale: a judge error", "x/a,x/b", judges{"x/a": fixed(`{"score":9,"reason":""}`), "x/b": fixed(`{"score":1,"reason":""}`)}, 0, 0.5, false},
		{"garbage: no score", "x/a", judges{"x/a": fixed("five")}, 0, 1, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := judgeTask(t, yaml, map[string]string{"judge": tc.judges}, tc.fake, row, "It is Paris")
			got, ok := j.Metrics["quality"]
			if ok == tc.absent || (ok && math.Abs(got-tc.want) > 1e-9) || j.Metrics[MetricJudgeErrorRate] != tc.errs {
				t.Errorf("metrics %v, want quality %v, judge_error_rate %v", j.Metrics, tc.want, tc.errs)
			}
			if !strings.HasPrefix(j.Judgements[0].Judges[0].Verdict.PromptVersion, ScalePromptVersion+"+") {
				t.Errorf("prompt version %q", j.Judgements[0].Judges[0].Verdict.PromptVersion)
			}
		})
	}
	var got string
	judgeTask(t, yaml, nil, judges{DefaultJudge: func(r modelapi.Request) string { got = r.Messages[1].Content; return r.Oracle }}, row, "It is Paris")
	if got != "Question: capital?\nReference: Paris\nAnswer: It is Paris\nScore the answer." {
		t.Errorf("rendered judge prompt %q", got)
	}
	if j := judgeTask(t, yaml, nil, judges{DefaultJudge: oracle}, row, "Lyon"); j.Metrics["quality"] != 0 {
		t.Errorf("oracle on a wrong answer: %v", j.Metrics)
	}
}

func TestQAGrade(t *testing.T) {
	row := Row{ID: "r1", Target: "Paris", Fields: map[string]any{}}
	yaml := "  - {type: qa_grade, name: correct}\n"
	cases := []struct {
		name, reply string
		fake        judges
		want        float64
		grade       string
	}{
		{"oracle correct", "The capital is Paris.", judges{DefaultJudge: oracle}, 1, GradeCorrect},
		{"oracle incorrect", "Lyon", judges{DefaultJudge: oracle}, 0, GradeIncorrect},
		{"oracle not attempted", " ", judges{DefaultJudge: oracle}, 0, GradeNotAttempted},
		{"not attempted wins over correct", "x", judges{DefaultJudge: fixed(`{"attempted":false,"correct":true,"reason":""}`)}, 0, GradeNotAttempted},
		{"fenced JSON after reasoning", "x", judges{DefaultJudge: fixed("Let me see.\n```json\n{\"attempted\":true,\"correct\":true,\"reason\":\"\"}\n```")}, 1, GradeCorrect},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := judgeTask(t, yaml, nil, tc.fake, row, tc.reply)
			if j.Metrics["correct"] != tc.want || j.Judgements[0].Items[0].Label != tc.grade {
				t.Errorf("metrics %v, items %+v: want %v %s", j.Metrics, j.Judgements[0].Items, tc.want, tc.grade)
			}
		})
	}
}

func TestNormalise(t *testing.T) {
	for _, tc := range []struct {
		v      float64
		lo, hi int
		want   float64
	}{{1, 1, 5, 0}, {5, 1, 5, 1}, {3, 1, 5, 0.5}, {0, 0, 10, 0}, {2.5, 0, 10, 0.25}, {-1, -1, 1, 0}} {
		if got := Normalise(tc.v, tc.lo, tc.hi); got != tc.want {
			t.Errorf("Normalise(%v, %d, %d) = %v, want %v", tc.v, tc.lo, tc.hi, got, tc.want)
		}
	}
}

func TestJudgedBadInput(t *testing.T) {
	cases := []struct {
		name, scorers, want string
	}{
		{"unknown parameter", "  - {type: rubric, criteria: [{category: essential, text: a}], judge: x/y}\n", "scorers[0].judge"},
		{"no criteria", "  - {type: rubric}\n", "scorers[0].criteria: is required"},
		{"both", "  - {type: rubric, criteria: [{category: essential, text: a}], criteria_column: c}\n", "not both"},
		{"bad category", "  - {type: rubric, criteria: [{category: vital, text: a}]}\n", `category "vital"`},
		{"pitfalls alone", "  - {type: rubric, criteria: [{category: pitfall, text: a}]}\n", "pitfalls alone"},
		{"negative weight", "  - {type: rubric, criteria: [{category: essential, text: a, weight: -1}]}\n", "not a positive number"},
		{"id twice", "  - {type: rubric, criteria: [{id: a, category: essential, text: a}, {id: a, category: essential, text: b}]}\n", "given twice"},
		{"bad breaker", "  - {type: rubric, breaker: halt, criteria: [{category: essential, text: a}]}\n", "scorers[0].breaker"},
		{"cap without cap mode", "  - {type: rubric, cap: 0.3, criteria: [{category: essential, text: a}]}\n", "scorers[0].cap"},
		{"judge not a model", "  - {type: qa_grade, judges: [judge]}\n", "scorers[0].judges"},
		{"two panels", "  - {type: qa_grade, judges: [x/a]}\n  - {type: qa_grade, name: b, judges: [x/b]}\n", "scorers[1].judges"},
		{"reserved name", "  - {type: qa_grade, name: judge_error_rate}\n", "scorers[0].name"},
		{"scale without prompt", "  - {type: scale}\n", "scorers[0].prompt: is required"},
		{"scale bad template", "  - {type: scale, prompt: '{{ reply '}\n", "scorers[0].prompt"},
		{"scale bounds", "  - {type: scale, prompt: x, min: 5, max: 5}\n", "scorers[0].max"},
		{"judged with repeats", "  - {type: qa_grade}\ngeneration: {repeats: 3}\n", "generation.repeats: is 3"},
		{"judged with code", "  - {type: qa_grade}\n  - {type: code, language: python, tests: t}\n", "a code scorer and a judged scorer"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load("t.yaml", []byte(base+"scorers:\n"+tc.scorers))
			var e *Error
			if !errors.As(err, &e) || e.File != "t.yaml" || e.Line == 0 || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v: want an *Error naming t.yaml, a line and %q", err, tc.want)
			}
		})
	}
}

// TestCriteriaColumn: a row's criteria that do not parse fail the build's
// row check, naming the column; good ones judge.
func TestCriteriaColumn(t *testing.T) {
	c := compileScorers(t, "  - {type: rubric, name: q, criteria_column: rubric}\n")
	good := `[{"id":"a","category":"essential","text":"names Paris","keywords":["Paris"]}]`
	for _, tc := range []struct {
		name string
		v    any
		want string
	}{
		{"not JSON", "met: yes", "criteria_column"},
		{"unknown field", `[{"id":"a","category":"essential","text":"t","points":3}]`, "points"},
		{"empty", `[]`, "lists no criterion"},
		{"bad category", `[{"category":"vital","text":"t"}]`, "vital"},
		{"missing", nil, "rubric"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := map[string]any{}
			if tc.v != nil {
				f["rubric"] = tc.v
			}
			err := c.CheckRow(Row{ID: "r7", Fields: f})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "scorers[0] (q)") {
				t.Fatalf("CheckRow: %v, want an error naming scorers[0] (q) and %q", err, tc.want)
			}
		})
	}
	row := Row{ID: "r1", Target: "Paris", Fields: map[string]any{"rubric": good}}
	if err := c.CheckRow(row); err != nil {
		t.Fatal(err)
	}
	j, err := c.ScoreJudged(context.Background(), scorers.Env{Models: judges{DefaultJudge: oracle}}, prompt, row, Reply{Text: "Paris"})
	if err != nil || j.Metrics["q"] != 1 {
		t.Fatalf("metrics %v, %v", j.Metrics, err)
	}
}

// TestCheckDoesNotJudge: Score (task check) gives a judged scorer no
// metric, and says why, instead of a 0.
func TestCheckDoesNotJudge(t *testing.T) {
	c := compileScorers(t, rubricYAML+"  - {type: includes}\n")
	m, vs := c.Score(Row{Target: "Paris", Fields: map[string]any{}}, Reply{Text: "Paris"})
	if _, ok := m["quality"]; ok || m["includes"] != 1 || vs[0].Why != notJudgedHere {
		t.Errorf("metrics %v, verdicts %+v", m, vs)
	}
	want := []string{"quality", "includes", "quality_accuracy"}
	if got := c.Metrics(); len(got) < 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || got[len(got)-1] != MetricPanelUnanimous {
		t.Errorf("Metrics() = %v", got)
	}
}

// TestScaleTemplateRow: a scale prompt that reads a field a row lacks
// fails the row's check (at build), naming the scorer and the field.
func TestScaleTemplateRow(t *testing.T) {
	c := compileScorers(t, "  - {type: scale, name: s, prompt: 'Q: {{ question }} A: {{ reply }} ({{ hint }})'}\n")
	err := c.CheckRow(Row{ID: "r3", Target: "x", Fields: map[string]any{"question": "q"}})
	if err == nil || !strings.Contains(err.Error(), "scorers[0] (s)") || !strings.Contains(err.Error(), "hint") {
		t.Fatalf("CheckRow: %v, want an error naming scorers[0] (s) and hint", err)
	}
	if err := c.CheckRow(Row{ID: "r4", Target: "x", Fields: map[string]any{"question": "q", "hint": "h"}}); err != nil {
		t.Fatal(err)
	}
}
