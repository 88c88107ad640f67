package lmeval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"

	"github.com/benchline/benchline/scorers/taskfile"
)

// files is an in-memory folder for Load.
type files map[string]string

func (f files) read(p string) ([]byte, error) {
	s, ok := f[path.Clean(p)]
	if !ok {
		return nil, fmt.Errorf("open %s: no such file", p)
	}
	return []byte(s), nil
}

const base = `task: t
dataset_path: org/data
test_split: test
doc_to_text: "Q: {{q}}"
doc_to_target: a
`

func TestRefusals(t *testing.T) {
	cases := []struct {
		name, yaml, key, why string
	}{
		{"loglikelihood", base + "output_type: loglikelihood\n", "output_type", "log-probabilities"},
		{"multiple_choice", base + "output_type: multiple_choice\n", "output_type", "only generate_until"},
		{"rolling", base + "output_type: loglikelihood_rolling\n", "output_type", "log-probabilities"},
		{"function", strings.Replace(base, "doc_to_target: a", "doc_to_target: !function utils.target", 1), "doc_to_target", "!function utils.target is Python"},
		{"process_results", base + "process_results: !function utils.p\n", "process_results", "no Python"},
		{"process_docs", base + "process_docs: !function utils.p\n", "process_docs", "no Python"},
		{"unknown", base + "doc_to_magic: x\n", "doc_to_magic", "not a key"},
		{"gen kwargs", base + "generation_kwargs: {num_beams: 2}\n", "generation_kwargs.num_beams", "not supported"},
		{"top_p", base + "generation_kwargs: {top_p: 1.5}\n", "generation_kwargs.top_p", "at most 1"},
		{"filter", base + "filter_list: [{name: f, filter: [{function: format_span}, {function: take_first}]}]\n", "filter_list[0].filter[0]", "format_span"},
		{"multi_choice_regex param", base + "filter_list: [{name: f, filter: [{function: multi_choice_regex, ignore_spaces: true}, {function: take_first}]}]\n", "filter_list[0].filter[0]", "ignore_spaces is not a parameter"},
		{"filter param", base + "filter_list: [{name: f, filter: [{function: regex, group: 1}, {function: take_first}]}]\n", "filter_list[0].filter[0]", "group is not a parameter"},
		{"no reducer", base + "filter_list: [{name: f, filter: [{function: lowercase}]}]\n", "filter_list[0].filter", "must end with take_first"},
		{"bad regex", base + "filter_list: [{name: f, filter: [{function: regex, regex_pattern: '(a'}, {function: take_first}]}]\n", "filter_list[0].filter[0]", "regex_pattern"},
		{"metric", base + "metric_list: [{metric: bleu}]\n", "metric_list[0].metric", "bleu"},
		{"metric param", base + "metric_list: [{metric: exact_match, ignore_spaces: true}]\n", "metric_list[0].ignore_spaces", "not a parameter"},
		{"aggregation", base + "metric_list: [{metric: exact_match, aggregation: median}]\n", "metric_list[0].aggregation", "only mean"},
		{"repeats", base + "repeats: 65\n", "repeats", "want 1 to 64"},
		{"take_first_k past repeats", base + "repeats: 4\nfilter_list: [{name: f, filter: [{function: take_first_k, k: 8}, {function: take_first}]}]\n", "filter_list[0].filter[0]", "more than repeats"},
		{"ends with majority_vote", base + "repeats: 4\nfilter_list: [{name: f, filter: [{function: majority_vote}]}]\n", "filter_list[0].filter", "must end with take_first"},
		{"gen_prefix function", base + "gen_prefix: !function utils.p\n", "gen_prefix", "no Python"},
		{"fewshot sampler", base + "num_fewshot: 5\nfewshot_split: train\nfewshot_config: {sampler: balanced}\n", "fewshot_config.sampler", "balanced"},
		{"dataset_kwargs", base + "dataset_kwargs: {revision: main}\n", "dataset_kwargs.revision", "only data_files"},
		{"no split", strings.Replace(base, "test_split: test\n", "", 1), "test_split", "required"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := files{"dir/t.yaml": c.yaml}
			_, err := Check("dir/t.yaml", fs.read)
			if err == nil {
				t.Fatal("loads; want a refusal")
			}
			var e *Error
			if !errors.As(err, &e) || e.Key != c.key || !strings.Contains(e.Msg, c.why) || e.File != "dir/t.yaml" {
				t.Fatalf("error %v; want key %s and %q in %s", err, c.key, c.why, "dir/t.yaml")
			}
			if !errors.Is(err, taskfile.ErrInvalid) {
				t.Errorf("%v is not taskfile.ErrInvalid", err)
			}
		})
	}
}

func TestIncludeMerge(t *testing.T) {
	fs := files{
		"a/base.yaml":     "dataset_path: org/data\ntest_split: test\ndoc_to_text: base\ndoc_to_target: a\ntask_list: [x]\n",
		"a/mid.yaml":      "include: base.yaml\ndoc_to_text: \"mid {{q}}\"\ndescription: from mid\n",
		"a/sub/t.yaml":    "include: [../mid.yaml]\ntask: t\ndescription: own\n",
		"a/loop.yaml":     "include: loop.yaml\ntask: l\n",
		"a/sub/fn.yaml":   "include: ../fnbase.yaml\ntask: f\n",
		"a/fnbase.yaml":   base + "process_results: !function utils.p\n",
		"a/sub/gone.yaml": "include: nothere.yaml\ntask: g\n",
	}
	task, err := Check("a/sub/t.yaml", fs.read)
	if err != nil {
		t.Fatal(err)
	}
	if task.DocToText != "mid {{q}}" || task.Description != "own" || task.DatasetPath != "org/data" {
		t.Errorf("merged %+v: want doc_to_text from mid.yaml, description from t.yaml", task)
	}
	if _, err := Check("a/loop.yaml", fs.read); err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Errorf("a file including itself: %v", err)
	}
	// The refusal names the included file the key came from.
	var e *Error
	if _, err := Check("a/sub/fn.yaml", fs.read); !errors.As(err, &e) || e.File != "a/fnbase.yaml" || e.Key != "process_results" {
		t.Errorf("key from an include: %v", err)
	}
	if _, err := Check("a/sub/gone.yaml", fs.read); err == nil || !strings.Contains(err.Error(), "a/sub/nothere.yaml") {
		t.Errorf("missing include: %v", err)
	}
}

func TestDetect(t *testing.T) {
	for doc, want := range map[string]bool{
		base:                       true,
		"task: t\ninclude: b.yaml": true,
		"name: x\ndescription: d\ndata: {test: {path: a.jsonl}}\n": false,
		"task: t\n":                false,
		"group: g\ntask: [a, b]\n": false,
		"- a\n- b\n":               false,
	} {
		if got := Detect([]byte(doc)); got != want {
			t.Errorf("Detect(%q) = %v, want %v", doc, got, want)
		}
	}
}

func TestMissingDataNamesTheFlag(t *testing.T) {
	fs := files{"t.yaml": base}
	_, err := Translate("t.yaml", fs.read, nil, "")
	if err == nil || !strings.Contains(err.Error(), "--data org/data=DIR") {
		t.Fatalf("error %v: want the flag to add", err)
	}
}

// TestTranslatedTaskScores compiles the translated task file and scores
// through taskfile's scorer path (the one evaluations use).
func TestTranslatedTaskScores(t *testing.T) {
	fs := files{"t.yaml": base + `description: "Be brief."
generation_kwargs: {until: ["\n", "Q:", "a", "b", "c"], max_gen_toks: 32, do_sample: false, temperature: 0.7}
filter_list:
  - name: strict-match
    filter: [{function: regex, regex_pattern: "is (\\w+)"}, {function: take_first}]
  - name: loose
    filter: [{function: remove_whitespace}, {function: take_first}]
metric_list: [{metric: exact_match, ignore_case: true}]
`}
	raw, err := Translate("t.yaml", fs.read, map[string]string{"org/data": "/data/t.jsonl"}, "")
	if err != nil {
		t.Fatal(err)
	}
	c, err := taskfile.Load("t.yaml", raw)
	if err != nil {
		t.Fatalf("%v\n%s", err, raw)
	}
	if got := strings.Join(c.Metrics(), " "); got != "exact_match,strict-match exact_match,loose" {
		t.Errorf("metrics %q", got)
	}
	g := c.Spec.Generation
	if *g.Temperature != 0.7 || g.MaxTokens != 32 || strings.Join(g.Stop, "|") != "\n|Q:|a|b" {
		t.Errorf("generation %v %d %q: want temperature as given (lm-eval drops do_sample), max_gen_toks, the first 4 of until", *g.Temperature, g.MaxTokens, g.Stop)
	}
	msgs, err := c.Messages(taskfile.Row{ID: "1", Fields: map[string]any{"q": "colour?", "a": "Blue"}}, nil)
	if err != nil || len(msgs) != 2 || msgs[0].Role != "system" || msgs[0].Content != "Be brief." || msgs[1].Content != "Q: colour?" {
		t.Fatalf("messages %+v (%v)", msgs, err)
	}
	scores, _ := c.Score(taskfile.Row{ID: "1", Fields: map[string]any{"q": "colour?", "a": "Blue"}}, taskfile.Reply{Text: " It is blue "})
	if scores["exact_match,strict-match"] != 1 || scores["exact_match,loose"] != 0 {
		t.Errorf("scores %v", scores)
	}
}

func TestConvertRelative(t *testing.T) {
	fs := files{"t.yaml": base}
	raw, err := Translate("t.yaml", fs.read, map[string]string{"org/data": "/work/data/gsm8k"}, "/work")
	if err != nil || !strings.Contains(string(raw), "path: data/gsm8k") {
		t.Fatalf("%s (%v): want the data's path relative to /work", raw, err)
	}
	if _, err := Translate("t.yaml", fs.read, map[string]string{"org/data": "/elsewhere/gsm8k"}, "/work"); err == nil || !strings.Contains(err.Error(), "not inside /work") {
		t.Fatalf("data outside the output's folder: %v", err)
	}
}

// TestConvertedFileFitsTheSchema validates what task convert writes
// against docs/taskfile.schema.json, the editors' schema.
func TestConvertedFileFitsTheSchema(t *testing.T) {
	raw, err := os.ReadFile("../../docs/taskfile.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("s.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("s.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"gsm8k", "gsm8k-cot", "boolq-seq2seq", "babi", "triviaqa", "gsm8k-platinum", "gsm8k-sampling", "arc-challenge-chat"} {
		file := filepath.Join("testdata", "tasks", name+".yaml")
		out, err := Translate(file, os.ReadFile, map[string]string{"openai/gsm8k": "/d", "aps/super_glue": "/d", "Muennighoff/babi": "/d", "mandarjoshi/trivia_qa": "/d", "allenai/ai2_arc": "/d"}, "")
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := yaml.Unmarshal(out, &v); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(v)
		inst, _ := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err := sch.Validate(inst); err != nil {
			t.Errorf("%s: the schema refuses the converted task file: %v\n%s", name, err, out)
		}
	}
}

func TestCompat(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a/good.yaml", base+"output_type: generate_until\n")
	write("a/py.yaml", base+"output_type: generate_until\nprocess_results: !function utils.p\n")
	write("b/mc.yaml", base+"output_type: multiple_choice\n")
	write("b/_tmpl.yaml", "output_type: generate_until\ndoc_to_text: x\n")
	write("b/inherits.yaml", "include: _tmpl.yaml\ntask: i\ndataset_path: d\ntest_split: t\ndoc_to_target: a\n")
	write("c/group.yaml", "group: g\ntask: [a, b]\noutput_type: generate_until\n")
	rows, err := Compat(dir, false, os.ReadFile)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rows {
		v := "loads"
		if r.Err != nil {
			v = r.Err.Error()
		}
		got = append(got, r.File+": "+v)
	}
	want := []string{"a/good.yaml: loads", "a/py.yaml: a/py.yaml: process_results: is Python code that scores replies; benchline runs no Python: use filter_list and metric_list"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("compat:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	rows, err = Compat(dir, true, os.ReadFile)
	if err != nil || len(rows) != 3 || rows[2].File != "b/inherits.yaml" || rows[2].Err != nil {
		t.Errorf("compat --all: %+v (%v): want b/inherits.yaml, which inherits generate_until, loading too", rows, err)
	}
}

// TestScorerConcurrent scores from many goroutines at once, as a worker
// does (run with -race to see a shared template cache unguarded).
func TestScorerConcurrent(t *testing.T) {
	fs := files{"t.yaml": strings.Replace(base, "doc_to_target: a", `doc_to_target: "{{a.strip()}}"`, 1)}
	raw, err := Translate("t.yaml", fs.read, map[string]string{"org/data": "/d.jsonl"}, "")
	if err != nil {
		t.Fatal(err)
	}
	c, err := taskfile.Load("t.yaml", raw)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	bad := make(chan string, 64)
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			want := fmt.Sprint(i)
			s, _ := c.Score(taskfile.Row{ID: want, Fields: map[string]any{"q": "x", "a": " " + want + " "}}, taskfile.Reply{Text: want})
			if s["exact_match,none"] != 1 {
				bad <- want
			}
		}()
	}
	wg.Wait()
	close(bad)
	for b := range bad {
		t.Errorf("row %s scored 0", b)
	}
}

// TestMultiChoiceNeedsChoices: multi_choice_regex reads the row's choices
// column; a row without one, or with a choice that is not a string, is an
// error naming the column, not a score.
func TestMultiChoiceNeedsChoices(t *testing.T) {
	fs := files{"t.yaml": base + "filter_list: [{name: f, filter: [{function: multi_choice_regex, regex_pattern: 'x(y)'}, {function: take_first}]}]\n"}
	task, err := Check("t.yaml", fs.read)
	if err != nil {
		t.Fatal(err)
	}
	p := task.Pipelines[0]
	for _, doc := range []map[string]any{{"q": "1"}, {"choices": []any{"a", int64(2)}}} {
		if _, err := p.Apply([]string{"no match"}, doc); err == nil || !strings.Contains(err.Error(), "choices") {
			t.Errorf("row %v: %v, want an error naming the choices column", doc, err)
		}
	}
	if got, err := p.Apply([]string{"it is B: b"}, map[string]any{"choices": []any{"a", "b"}}); err != nil || got != "(B)" {
		t.Errorf("a choice's text: %q, %v; want (B)", got, err)
	}
}
