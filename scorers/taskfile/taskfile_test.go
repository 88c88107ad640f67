package taskfile

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

const base = `name: t
description: a test task
data:
  test: {path: data/test.jsonl}
columns: {target: answer}
prompt:
  messages:
    - {role: user, content: "Q: {{ question }}"}
`

// compileScorers compiles base with the given scorers block.
func compileScorers(t *testing.T, scorers string) *Compiled {
	t.Helper()
	c, err := Load("t.yaml", []byte(base+"scorers:\n"+scorers))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return c
}

func TestScorers(t *testing.T) {
	row := func(target string, fields map[string]any) Row {
		if fields == nil {
			fields = map[string]any{}
		}
		return Row{ID: "r1", Target: target, Fields: fields}
	}
	cases := []struct {
		name    string
		scorers string
		row     Row
		reply   string
		want    float64
	}{
		{"exact trims", "  - type: exact_match\n", row("Paris", nil), "  Paris\n", 1},
		{"exact is case-sensitive by default", "  - type: exact_match\n", row("Paris", nil), "paris", 0},
		{"exact ignore_case", "  - {type: exact_match, ignore_case: true}\n", row("Paris", nil), "PARIS", 1},
		{"exact ignore_punctuation", "  - {type: exact_match, ignore_punctuation: true}\n", row("Paris", nil), "Paris.", 1},
		{"exact regexes_to_ignore", "  - {type: exact_match, regexes_to_ignore: [',', '\\$']}\n", row("1000", nil), "$1,000", 1},
		{"exact ignore_whitespace", "  - {type: exact_match, ignore_whitespace: true}\n", row("a b", nil), "ab", 1},
		{"exact ignore_numbers", "  - {type: exact_match, ignore_numbers: true}\n", row("x", nil), "x1", 1},
		{"extract last", "  - type: exact_match\n    extract: {regex: 'answer is (\\w+)', select: last}\n", row("B", nil), "answer is A. no, answer is B", 1},
		{"extract first", "  - type: exact_match\n    extract: {regex: 'answer is (\\w+)'}\n", row("B", nil), "answer is A. no, answer is B", 0},
		{"extract fallback", "  - type: exact_match\n    extract: {regex: '#### (\\d+)', fallback: none}\n", row("none", nil), "no marker", 1},
		{"includes target", "  - type: includes\n", row("Paris", nil), "It is Paris, France", 1},
		{"includes target missing", "  - type: includes\n", row("Paris", nil), "It is Lyon", 0},
		{"includes all", "  - {type: includes, mode: all, values: ['{{ a }}', 'b']}\n", row("", map[string]any{"a": "x"}), "x and b", 1},
		{"includes all missing", "  - {type: includes, mode: all, values: ['{{ a }}', 'b']}\n", row("", map[string]any{"a": "x"}), "x only", 0},
		{"includes any folded", "  - {type: includes, ignore_case: true, values: [FOO, bar]}\n", row("", nil), "a foo", 1},
		{"regex", "  - {type: regex, pattern: '^\\d+$'}\n", row("", nil), "123", 1},
		{"regex not", "  - {type: regex, pattern: 'sorry', not: true}\n", row("", nil), "I am sorry", 0},
		{"numeric last", "  - type: numeric\n", row("42", nil), "6 times 7 is 42", 1},
		{"numeric commas", "  - type: numeric\n", row("3,000", nil), "3000", 1},
		{"numeric first", "  - {type: numeric, select: first}\n", row("6", nil), "6 times 7 is 42", 1},
		{"numeric tolerance", "  - {type: numeric, tolerance: 0.001}\n", row("3.14159", nil), "about 3.14", 0},
		{"numeric tolerance met", "  - {type: numeric, tolerance: 0.01}\n", row("3.14159", nil), "about 3.142", 1},
		{"numeric relative", "  - {type: numeric, tolerance: 0.01, relative: true}\n", row("1000", nil), "1009", 1},
		{"numeric none", "  - type: numeric\n", row("1", nil), "none", 0},
		{"numeric negative", "  - type: numeric\n", row("-5", nil), "it is -5", 1},
		{"choice leading", "  - type: choice\n", row("B", nil), "B. because", 1},
		{"choice parenthesised", "  - type: choice\n", row("B", nil), "(B)", 1},
		{"choice stated", "  - type: choice\n", row("C", nil), "I think the answer is C", 1},
		{"choice wrong", "  - type: choice\n", row("C", nil), "A", 0},
		{"choice by index", "  - type: choice\n", row("2", nil), "C", 1},
		{"choice by text", "  - {type: choice, choices: options}\n", row("dog", map[string]any{"options": []any{"cat", "dog"}}), "B", 1},
		{"choice labels", "  - {type: choice, labels: XYZ}\n", row("Y", nil), "Y", 1},
		{"choice none", "  - type: choice\n", row("A", nil), "no idea", 0},
		{"json valid", "  - type: json\n", row("", nil), `{"a": 1}`, 1},
		{"json invalid", "  - type: json\n", row("", nil), `{"a": 1`, 0},
		{"json fenced needs extract", "  - type: json\n", row("", nil), "```json\n{\"a\": 1}\n```", 0},
		{"json fenced extract", "  - {type: json, extract: true}\n", row("", nil), "Here:\n```json\n{\"a\": 1}\n```", 1},
		{"json schema", "  - type: json\n    schema: {type: object, required: [name], properties: {name: {type: string}}}\n", row("", nil), `{"name": "x"}`, 1},
		{"json schema fails", "  - type: json\n    schema: {type: object, required: [name]}\n", row("", nil), `{"nom": "x"}`, 0},
		{"json fields", "  - {type: json, fields: [name, age]}\n", row(`{"name": "x", "age": 3, "other": 1}`, nil), `{"age": 3, "name": "x"}`, 1},
		{"json fields differ", "  - {type: json, fields: [name, age]}\n", row(`{"name": "x", "age": 3}`, nil), `{"age": 4, "name": "x"}`, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := compileScorers(t, tc.scorers)
			m, vs := c.Score(tc.row, Reply{Text: tc.reply})
			if len(vs) != 1 {
				t.Fatalf("verdicts %v", vs)
			}
			if got := m[vs[0].Metric]; got != tc.want {
				t.Errorf("score(%q, target %q) = %v (%s), want %v", tc.reply, tc.row.Target, got, vs[0].Why, tc.want)
			}
			if tc.want == 0 && vs[0].Why == "" {
				t.Errorf("a 0 without a reason")
			}
		})
	}
}

// TestBadTaskFiles: each bad task file fails naming the file, the key and,
// where the key is written, its line.
func TestBadTaskFiles(t *testing.T) {
	cases := []struct {
		name, file string
		want       []string // in the error
	}{
		{"unknown scorer", base + "scorers:\n  - type: bleu\n", []string{"t.yaml:10", "scorers[0].type", `"bleu" is not a scorer`}},
		{"unknown parameter", base + "scorers:\n  - type: exact_match\n    ignore_cse: true\n", []string{"t.yaml:11", "scorers[0].ignore_cse", "not a parameter"}},
		{"bad regex", base + "scorers:\n  - type: regex\n    pattern: 'a(?<=b)'\n", []string{"t.yaml:11", "scorers[0].pattern", "RE2"}},
		{"bad regex to ignore", base + "scorers:\n  - type: exact_match\n    regexes_to_ignore: ['[']\n", []string{"t.yaml:11", "regexes_to_ignore", `"["`}},
		{"unknown key", strings.Replace(base, "description:", "descripton:", 1) + "scorers: [{type: regex, pattern: x}]\n", []string{"t.yaml:2", "descripton"}},
		{"template syntax", strings.Replace(base, "{{ question }}", "{{ question ", 1) + "scorers: [{type: regex, pattern: x}]\n", []string{"t.yaml:8", "prompt.messages[0].content"}},
		{"no test split", strings.Replace(base, "  test:", "  train:", 1) + "scorers: [{type: regex, pattern: x}]\n", []string{"t.yaml:3", "data", "no test split"}},
		{"no scorers", base, []string{"t.yaml", "scorers", "required"}},
		{"target needed", strings.Replace(base, "columns: {target: answer}\n", "", 1) + "scorers:\n  - type: exact_match\n", []string{"t.yaml:9", "scorers[0].type", "columns.target"}},
		{"bad name", strings.Replace(base, "name: t", "name: My Task", 1) + "scorers: [{type: regex, pattern: x}]\n", []string{"t.yaml:1", "name"}},
		{"duplicate metric", base + "scorers:\n  - {type: regex, pattern: x}\n  - {type: regex, pattern: y}\n", []string{"t.yaml:11", "scorers[1].name", "twice"}},
		{"headline unknown", base + "metric: acc\nscorers: [{type: regex, pattern: x}]\n", []string{"t.yaml:9", "metric", `"acc"`}},
		{"bad format", strings.Replace(base, "{path: data/test.jsonl}", "{path: data/test.jsonl, format: xml}", 1) + "scorers: [{type: regex, pattern: x}]\n", []string{"t.yaml:4", "data.test[0].format"}},
		{"last message not user", strings.Replace(base, "role: user", "role: assistant", 1) + "scorers: [{type: regex, pattern: x}]\n", []string{"t.yaml:8", "prompt.messages[0].role"}},
		{"include refused", strings.Replace(base, "{{ question }}", "{% include 'x' %}", 1) + "scorers: [{type: regex, pattern: x}]\n", []string{"t.yaml:8", "prompt.messages[0].content"}},
		{"not yaml", "name: [", []string{"t.yaml"}},
		{"json schema invalid", base + "scorers:\n  - type: json\n    schema: {type: 12}\n", []string{"t.yaml:11", "scorers[0].schema"}},
		{"fewshot split missing", base + "  fewshot: {from: train, n: 2}\nscorers: [{type: regex, pattern: x}]\n", []string{"t.yaml:9", "prompt.fewshot.from", `"train"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load("t.yaml", []byte(tc.file))
			if err == nil {
				t.Fatal("Load succeeded")
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("%v is not ErrInvalid", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestMessages(t *testing.T) {
	c, err := Load("t.yaml", []byte(`name: t
description: d
data: {test: {path: a.jsonl}, train: {path: b.jsonl}}
columns: {target: answer}
prompt:
  messages:
    - {role: system, content: "Answer {{ 'briefly' if short else 'fully' }}."}
    - {role: user, content: "Q: {{ question | upper }}\n{% for c in choices %}{{ 'ABCD'[loop.index0] }}. {{ c }}\n{% endfor %}"}
  fewshot: {from: train, n: 1, seed: 3}
scorers: [{type: choice}]
`))
	if err != nil {
		t.Fatal(err)
	}
	r := Row{ID: "x", Target: "B", Fields: map[string]any{"short": true, "question": "which?", "choices": []any{"no", "yes"}, "answer": "B"}}
	shot := Row{ID: "s", Target: "A", Fields: map[string]any{"short": true, "question": "first?", "choices": []any{"yes", "no"}, "answer": "A"}}
	msgs, err := c.Messages(r, c.Shots([]Row{shot}, r))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range msgs {
		got = append(got, m.Role+": "+m.Content)
	}
	want := []string{
		"system: Answer briefly.",
		"user: Q: FIRST?\nA. yes\nB. no\n",
		"assistant: A",
		"user: Q: WHICH?\nA. no\nB. yes\n",
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("messages:\n%q\nwant\n%q", got, want)
	}
	// A missing column names the file, line, key and row.
	_, err = c.Messages(Row{ID: "y", Fields: map[string]any{"short": false}}, nil)
	var re *RenderError
	if !errors.As(err, &re) || re.Row != "y" || re.Line != 8 || re.Key != "prompt.messages[1].content" || !strings.Contains(err.Error(), "t.yaml:8") {
		t.Errorf("render error = %v", err)
	}
}

func TestTemplateBounds(t *testing.T) {
	c, err := Load("t.yaml", []byte(strings.Replace(base, "{{ question }}", "{% for i in range(n) %}{{ question }}{% endfor %}", 1)+"scorers: [{type: regex, pattern: x}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Messages(Row{ID: "r", Fields: map[string]any{"n": 20000, "question": "q"}}, nil); err == nil || !strings.Contains(err.Error(), "range makes more than") {
		t.Errorf("range past the limit: %v", err)
	}
	big := strings.Repeat("x", 200<<10)
	if _, err := c.Messages(Row{ID: "r", Fields: map[string]any{"n": 9, "question": big}}, nil); err == nil || !strings.Contains(err.Error(), "renders more than") {
		t.Errorf("render past the limit: %v", err)
	}
	if _, err := c.Messages(Row{ID: "r", Fields: map[string]any{"n": 2, "question": "q"}}, nil); err != nil {
		t.Errorf("within the limits: %v", err)
	}
	if _, err := Load("t.yaml", []byte(strings.Replace(base, "{{ question }}", strings.Repeat("y", MaxTemplateBytes+1), 1)+"scorers: [{type: regex, pattern: x}]\n")); err == nil || !strings.Contains(err.Error(), "the limit") {
		t.Errorf("a template past the limit: %v", err)
	}
}

func TestShotsStableAndNotSelf(t *testing.T) {
	if a, b := ShotOrder(10, 5), ShotOrder(10, 5); strings.Join(strs(a), ",") != strings.Join(strs(b), ",") {
		t.Fatalf("same seed, different order: %v %v", a, b)
	}
	if a, b := ShotOrder(10, 5), ShotOrder(10, 6); strings.Join(strs(a), ",") == strings.Join(strs(b), ",") {
		t.Errorf("seeds 5 and 6 give the same order %v", a)
	}
	c, err := Load("t.yaml", []byte(strings.Replace(base, "  test:", "  train: {path: b.jsonl}\n  test:", 1)+"  fewshot: {from: train, n: 3, seed: 1}\nscorers: [{type: exact_match}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	var pool []Row
	for i := range 4 {
		pool = append(pool, Row{ID: string(rune('a' + i)), Target: "t"})
	}
	for _, self := range pool {
		shots := c.Shots(pool, self)
		if len(shots) != 3 {
			t.Fatalf("%d shots, want 3", len(shots))
		}
		for _, s := range shots {
			if s.ID == self.ID {
				t.Errorf("row %s is its own example", self.ID)
			}
		}
	}
}

func strs(xs []int) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = string(rune('0' + x))
	}
	return out
}

// TestShotSamplers: sampler python draws each row's examples as lm-eval's
// default sampler does, random.Random(seed).sample(pool, n) with one state
// over the rows in order (the indexes are what CPython 3.11 printed for
// Random(1234).sample(range(8), 3) three times); first takes the split's
// first n rows; a sampler it does not know is refused.
func TestShotSamplers(t *testing.T) {
	load := func(extra string) (*Compiled, error) {
		return Load("t.yaml", []byte(strings.Replace(base, "  test:", "  train: {path: b.jsonl}\n  test:", 1)+"  fewshot: {from: train, n: 3, seed: 1234"+extra+"}\nscorers: [{type: exact_match}]\n"))
	}
	var pool []Row
	for i := range 8 {
		pool = append(pool, Row{ID: fmt.Sprint(i), Target: "t"})
	}
	ids := func(rs []Row) string {
		var out []string
		for _, r := range rs {
			out = append(out, r.ID)
		}
		return strings.Join(out, ",")
	}
	for _, tc := range []struct {
		sampler string
		want    []string
	}{
		{"python", []string{"7,0,6", "1,6,4", "0,5,6"}},
		{"first", []string{"0,1,2", "0,1,2", "0,1,2"}},
	} {
		c, err := load(", sampler: " + tc.sampler)
		if err != nil {
			t.Fatal(err)
		}
		draw := c.ShotDrawer(pool)
		for i, w := range tc.want {
			shots, err := draw(Row{ID: "x" + fmt.Sprint(i)})
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(shots); got != w {
				t.Errorf("%s, row %d: examples %s, want %s", tc.sampler, i+1, got, w)
			}
		}
	}
	if _, err := load(", sampler: balanced"); err == nil || !strings.Contains(err.Error(), "prompt.fewshot.sampler") {
		t.Errorf("sampler balanced: %v", err)
	}
}

// TestShotDropSame: drop_same leaves out the pool rows equal to the row
// evaluated, as lm-eval's rm_eval_doc does: python draws n+1 with one
// state over the rows (CPython 3.11's Random(1234).sample(range(8), 4),
// three times, was [7,0,6,5], [0,5,6,7], [1,6,2,7]) and keeps the first n
// others; first keeps the split's first n others; a row that leaves fewer
// than n is an error naming it; shuffle refuses the key.
func TestShotDropSame(t *testing.T) {
	load := func(n int, sampler string) (*Compiled, error) {
		return Load("t.yaml", []byte(strings.Replace(base, "  test:", "  train: {path: b.jsonl}\n  test:", 1)+fmt.Sprintf("  fewshot: {from: train, n: %d, seed: 1234, sampler: %s, drop_same: true}\nscorers: [{type: exact_match}]\n", n, sampler)))
	}
	var pool []Row
	for i := range 8 {
		pool = append(pool, Row{ID: fmt.Sprint(i), Target: "t", Fields: map[string]any{"q": int64(i), "tags": []any{"a"}}})
	}
	ids := func(rs []Row) string {
		var out []string
		for _, r := range rs {
			out = append(out, r.ID)
		}
		return strings.Join(out, ",")
	}
	for _, tc := range []struct {
		sampler string
		want    []string
	}{
		{"python", []string{"7,6,5", "0,5,6", "1,6,7"}},
		{"first", []string{"1,2,3", "0,2,3", "0,1,3"}},
	} {
		c, err := load(3, tc.sampler)
		if err != nil {
			t.Fatal(err)
		}
		draw := c.ShotDrawer(pool)
		for i, w := range tc.want {
			// the row evaluated is the pool's row i, under another id
			shots, err := draw(Row{ID: "x" + fmt.Sprint(i), Fields: map[string]any{"q": int64(i), "tags": []any{"a"}}})
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(shots); got != w {
				t.Errorf("%s, row %d: examples %s, want %s", tc.sampler, i+1, got, w)
			}
		}
	}
	c, err := load(8, "first")
	if err != nil {
		t.Fatal(err)
	}
	dup := append(append([]Row{}, pool...), Row{ID: "8", Fields: pool[0].Fields})
	if _, err := c.ShotDrawer(dup)(Row{ID: "x0", Fields: pool[0].Fields}); err == nil || !strings.Contains(err.Error(), "row x0") {
		t.Errorf("a row equal to two of the split's 9, n 8: %v, want an error naming the row", err)
	}
	if _, err := load(3, "shuffle"); err == nil || !strings.Contains(err.Error(), "prompt.fewshot.drop_same") {
		t.Errorf("shuffle with drop_same: %v", err)
	}
}
