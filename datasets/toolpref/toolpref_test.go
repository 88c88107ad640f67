package toolpref_test

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/datasetstest"
	"github.com/benchline/benchline/datasets/toolpref"
	"github.com/benchline/benchline/internal/golden"
	"github.com/benchline/benchline/schemas"
)

var update = flag.Bool("update", false, "rewrite golden files")

// build plans and writes every part, as the workflow's activities do.
func build(t *testing.T, req datasets.Request) (datasets.Plan, []schemas.ToolPrefPair, error) {
	t.Helper()
	return datasetstest.Build[schemas.ToolPrefPair](t, toolpref.Builder{}, req, nil)
}

const trailsQ = `{"id": "t0", "question": [[{"role": "user", "content": "Dog-friendly trails near Boulder up to 8 miles."}]], "function": [{"name": "trails.search", "description": "Search trails.", "parameters": {"type": "dict", "properties": {"location": {"type": "string", "description": "City."}, "max_miles": {"type": "float", "description": "Max length."}, "dog_friendly": {"type": "boolean", "description": "Dogs allowed."}, "difficulty": {"type": "string", "description": "Optional."}}, "required": ["location"]}}]}`
const trailsGT = `[{"trails.search": {"location": ["Boulder, Colorado", "Boulder, CO"], "max_miles": [8.0], "dog_friendly": [true], "difficulty": [""]}}]`

const popQ = `{"id": "p0", "question": [[{"role": "user", "content": "Population of Canada, Chile and Kenya in 2020."}]], "function": [{"name": "stats.population", "description": "Population.", "parameters": {"type": "dict", "properties": {"country": {"type": "string", "description": "Country."}, "year": {"type": "integer", "description": "Year."}}, "required": ["country", "year"]}}]}`
const popGT = `[{"stats.population": {"country": ["Canada"], "year": [2020]}}, {"stats.population": {"country": ["Chile"], "year": [2020]}}, {"stats.population": {"country": ["Kenya"], "year": [2020]}}]`

func call(name, args string) string {
	return "<tool_call>\n{\"name\": \"" + name + "\", \"arguments\": " + args + "}\n</tool_call>"
}

func TestPartialCreditScore(t *testing.T) {
	trails, err := toolpref.NewItem("simple_python", trailsQ, trailsGT)
	if err != nil {
		t.Fatal(err)
	}
	pop, err := toolpref.NewItem("parallel", popQ, popGT)
	if err != nil {
		t.Fatal(err)
	}
	pc := func(c string) string { return call("stats.population", `{"country": "`+c+`", "year": 2020}`) }
	tests := []struct {
		name    string
		item    *toolpref.Item
		reply   string
		want    float64
		wantErr string // BFCL error type, "" = valid
	}{
		{"ground truth", trails, call("trails.search", `{"location": "Boulder, Colorado", "max_miles": 8.0, "dog_friendly": true}`), 1, ""},
		{"second acceptable value, int for float", trails, call("trails.search", `{"location": "boulder co", "max_miles": 8, "dog_friendly": true}`), 1, ""},
		// V = 2/4 (location and dog_friendly wrong; difficulty omitted is fine): 0.2+0.2+0.6*0.5
		{"two wrong values", trails, call("trails.search", `{"location": "Denver, Colorado", "max_miles": 8.0, "dog_friendly": "yes"}`), 0.7, "value_error:string"},
		// V = 3/4 (dog_friendly missing, not omittable): 0.2+0.2+0.45
		{"missing optional-in-schema but expected arg", trails, call("trails.search", `{"location": "Boulder, CO", "max_miles": 8.0}`), 0.85, "simple_function_checker:missing_optional"},
		// R = 0, V = 3/4: 0.2+0+0.45
		{"missing required arg", trails, call("trails.search", `{"max_miles": 8.0, "dog_friendly": true}`), 0.65, "simple_function_checker:missing_required"},
		// V = 4/5 (an unexpected param enlarges the denominator): 0.2+0.2+0.48
		{"unexpected arg", trails, call("trails.search", `{"location": "Boulder, CO", "max_miles": 8.0, "dog_friendly": true, "pets": 2}`), 0.88, "simple_function_checker:unexpected_param"},
		{"wrong function", trails, call("trails_search", `{"location": "Boulder, CO", "max_miles": 8.0, "dog_friendly": true}`), 0, "simple_function_checker:wrong_func_name"},
		{"extra duplicate call", trails, call("trails.search", `{"location": "Boulder, CO", "max_miles": 8.0, "dog_friendly": true}`) + "\n" + call("trails.search", `{"location": "Boulder, CO", "max_miles": 8.0, "dog_friendly": true}`), 0.5, "simple_function_checker:wrong_count"},
		{"text, no call", trails, "There are many trails near Boulder.", 0, "ast_decoder:decoder_failed"},
		{"parallel, any order", pop, pc("Kenya") + "\n" + pc("Canada") + "\n" + pc("Chile"), 1, ""},
		{"parallel, one call missing", pop, pc("Canada") + "\n" + pc("Chile"), 0.6667, "parallel_function_checker_no_order:wrong_count"},
		// matched: Canada 1, Chile 1, Kenya<-Peru 0.2+0.2+0.6*0.5 = 0.7; (1+1+0.7)/3
		{"parallel, one wrong value", pop, pc("Canada") + "\n" + pc("Chile") + "\n" + pc("Peru"), 0.9, "parallel_function_checker_no_order:cannot_find_match"},
		{"parallel, one extra call", pop, pc("Canada") + "\n" + pc("Chile") + "\n" + pc("Kenya") + "\n" + pc("Kenya"), 0.75, "parallel_function_checker_no_order:wrong_count"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, errType, _ := tc.item.Judge(tc.reply)
			if math.Abs(got-tc.want) > 1e-4 {
				t.Errorf("score = %v, want %v", got, tc.want)
			}
			if errType != tc.wantErr {
				t.Errorf("error type = %q, want %q", errType, tc.wantErr)
			}
			if got < 0 || got > 1 {
				t.Errorf("score %v outside [0, 1]", got)
			}
		})
	}
}

func TestPerturbations(t *testing.T) {
	for _, tc := range []struct {
		cat, q, gt string
		kinds      []string
	}{
		{"simple_python", trailsQ, trailsGT, []string{"ground_truth", toolpref.KindWrongValue, toolpref.KindMissingArg, toolpref.KindExtraCall, toolpref.KindWrongFunction}},
		{"parallel", popQ, popGT, []string{"ground_truth", toolpref.KindWrongValue, toolpref.KindMissingArg, toolpref.KindExtraCall, toolpref.KindWrongFunction, toolpref.KindMissingCall}},
	} {
		it, err := toolpref.NewItem(tc.cat, tc.q, tc.gt)
		if err != nil {
			t.Fatal(err)
		}
		cands, err := toolpref.Perturb(it)
		if err != nil {
			t.Fatal(err)
		}
		var kinds []string
		for _, c := range cands {
			kinds = append(kinds, c.Kind)
			if c.Kind == "ground_truth" {
				if c.Score != 1 || c.ErrorType != "" || c.Source != toolpref.GroundTruthSource {
					t.Errorf("%s: ground truth scored %v (%q)", it.ID, c.Score, c.ErrorType)
				}
				continue
			}
			if c.Source != toolpref.SyntheticSource || c.Score >= 1 || c.ErrorType == "" {
				t.Errorf("%s %s: source %q score %v error %q; want a synthetic failing candidate", it.ID, c.Kind, c.Source, c.Score, c.ErrorType)
			}
		}
		if strings.Join(kinds, ",") != strings.Join(tc.kinds, ",") {
			t.Errorf("%s: kinds %v, want %v", it.ID, kinds, tc.kinds)
		}
	}
}

func TestSelectBalancesProportions(t *testing.T) {
	// A skewed pool: source a has 80 pairs, b and c 20 each; intensity
	// high is 3x as common as low. Each pair is its own item.
	var pool []toolpref.Pair
	for i := range 120 {
		src := "a"
		switch {
		case i >= 100:
			src = "c"
		case i >= 80:
			src = "b"
		}
		in := "high"
		if i%4 == 0 {
			in = "low"
		}
		pool = append(pool, toolpref.Pair{ItemID: fmt.Sprint(i), Dims: [3]string{src, in, "simple"}})
	}
	count := func(picked []int, d int) map[string]int {
		m := map[string]int{}
		for _, i := range picked {
			m[pool[i].Dims[d]]++
		}
		return m
	}
	tests := []struct {
		name      string
		targets   toolpref.Targets
		n         int
		wantSrc   map[string]int
		wantInten map[string]int
	}{
		{"uniform", toolpref.Targets{}, 30, map[string]int{"a": 10, "b": 10, "c": 10}, map[string]int{"high": 15, "low": 15}},
		{"weighted", toolpref.Targets{{"a": 2, "b": 1, "c": 1}, {"high": 3, "low": 1}}, 40, map[string]int{"a": 20, "b": 10, "c": 10}, map[string]int{"high": 30, "low": 10}},
		{"excluded value", toolpref.Targets{{"a": 1, "b": 1, "c": 0}}, 20, map[string]int{"a": 10, "b": 10}, map[string]int{"high": 10, "low": 10}},
		// b and c run out (20 each): the rest comes from a.
		{"supply runs out", toolpref.Targets{}, 100, map[string]int{"a": 60, "b": 20, "c": 20}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			picked := toolpref.Select(pool, tc.targets, tc.n, 1, 7)
			if len(picked) != tc.n {
				t.Fatalf("picked %d, want %d", len(picked), tc.n)
			}
			// Greedy selection over the joint cells meets each dimension's
			// targets to within one pair when the supply allows.
			near := func(got, want map[string]int) bool {
				for _, k := range []string{"a", "b", "c", "high", "low"} {
					if d := got[k] - want[k]; d > 1 || d < -1 {
						return false
					}
				}
				return len(got) == len(want)
			}
			if got := count(picked, 0); !near(got, tc.wantSrc) {
				t.Errorf("sources %v, want %v (+-1)", got, tc.wantSrc)
			}
			if tc.wantInten != nil {
				if got := count(picked, 1); !near(got, tc.wantInten) {
					t.Errorf("intensity %v, want %v (+-1)", got, tc.wantInten)
				}
			}
			seen := map[int]bool{}
			for _, i := range picked {
				if seen[i] {
					t.Fatalf("pair %d picked twice", i)
				}
				seen[i] = true
			}
		})
	}
	// The seed changes which pairs, not how many of each.
	a, b := toolpref.Select(pool, toolpref.Targets{}, 30, 1, 1), toolpref.Select(pool, toolpref.Targets{}, 30, 1, 2)
	if fmt.Sprint(a) == fmt.Sprint(b) {
		t.Error("seeds 1 and 2 picked the same pairs")
	}
	if fmt.Sprint(count(a, 0)) != fmt.Sprint(count(b, 0)) {
		t.Error("seeds changed the proportions")
	}
	// Per-item cap.
	capped := []toolpref.Pair{{ItemID: "x", Dims: [3]string{"a", "low", "s"}}, {ItemID: "x", Dims: [3]string{"b", "low", "s"}}, {ItemID: "y", Dims: [3]string{"a", "low", "s"}}}
	if got := toolpref.Select(capped, toolpref.Targets{}, 3, 1, 0); len(got) != 2 {
		t.Errorf("per-item cap 1 picked %v, want 2 pairs", got)
	}
}

func TestBuildFixtures(t *testing.T) {
	plan, rows, err := build(t, datasets.Request{Source: toolpref.Embedded})
	if err != nil {
		t.Fatal(err)
	}
	items := map[string]bool{}
	ids := map[string]bool{}
	for _, r := range rows {
		items[r.ItemID] = true
		if ids[r.PairID] {
			t.Errorf("duplicate pair %s", r.PairID)
		}
		ids[r.PairID] = true
		if r.ChosenScore-r.RejectedScore < 0.1-1e-9 || r.Intensity != toolpref.Intensity(r.Gap) || r.Source != r.RejectedSource {
			t.Errorf("pair %s: scores %v/%v gap %v intensity %s source %s", r.PairID, r.ChosenScore, r.RejectedScore, r.Gap, r.Intensity, r.Source)
		}
		if r.RejectedError == "" {
			t.Errorf("pair %s: a rejected reply BFCL accepts", r.PairID)
		}
		// The fixture's sampled replies were all sampled at 0.7; generated
		// ones have no temperature.
		for _, side := range []struct {
			src  string
			temp *float64
		}{{r.ChosenSource, r.ChosenTemperature}, {r.RejectedSource, r.RejectedTemperature}} {
			if fromFile := strings.HasPrefix(side.src, "example/"); fromFile != (side.temp != nil) || (side.temp != nil && *side.temp != 0.7) {
				t.Errorf("pair %s: %s has temperature %v", r.PairID, side.src, side.temp)
			}
		}
		var msgs []map[string]string
		if json.Unmarshal([]byte(r.MessagesJSON), &msgs) != nil || msgs[0]["role"] != "user" || r.ToolsJSON == "" {
			t.Errorf("pair %s: messages %q", r.PairID, r.MessagesJSON)
		}
	}
	// Default: as many pairs as items with a pair (8 pairable fixture items; irrelevance is ignored).
	if len(rows) != 8 || len(plan.Parts) != 1 {
		t.Fatalf("%d rows over %d items in %d parts, want 8 rows", len(rows), len(items), len(plan.Parts))
	}
	if plan.Params["seed"] != "0" || plan.Params["synthetic"] != "true" {
		t.Errorf("params not normalized: %v", plan.Params)
	}
	// Explicit defaults give the same version; another seed another one.
	same, _, _ := build(t, datasets.Request{Source: toolpref.Embedded, Params: map[string]string{"seed": "0", "per_item": "2"}})
	if same.Version != plan.Version {
		t.Errorf("explicit defaults gave version %s, want %s", same.Version, plan.Version)
	}
	other, _, _ := build(t, datasets.Request{Source: toolpref.Embedded, Params: map[string]string{"seed": "5"}})
	if other.Version == plan.Version {
		t.Error("seed 5 gave the same version")
	}
	// Sampled candidates only.
	_, sampled, err := build(t, datasets.Request{Source: toolpref.Embedded, Params: map[string]string{"synthetic": "false", "pairs": "100", "per_item": "0"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range sampled {
		if r.ChosenSource == toolpref.SyntheticSource || r.RejectedSource == toolpref.SyntheticSource || r.ChosenSource == toolpref.GroundTruthSource {
			t.Errorf("synthetic=false still has %s vs %s", r.ChosenSource, r.RejectedSource)
		}
	}
	if len(sampled) == 0 {
		t.Error("no pair among sampled candidates")
	}

	// Golden: pair ids, scores and dimensions of the default build.
	var sb strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&sb, "%s\t%.4f\t%.4f\t%s\t%s\t%s\t%s\n", r.PairID, r.ChosenScore, r.RejectedScore, r.Intensity, r.Complexity, r.RejectedKind, r.RejectedError)
	}
	golden.Check(t, "testdata/fixtures_pairs.golden.tsv", sb.String(), *update, "")
}

func lines(t *testing.T, path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

func TestBuildBadInput(t *testing.T) {
	tests := []struct {
		name     string
		edit     func(t *testing.T, dir string) (file string, line int)
		params   map[string]string
		contains string
	}{
		{"candidate for an unknown item", func(t *testing.T, dir string) (string, int) {
			p := filepath.Join(dir, "candidates.jsonl")
			datasetstest.AppendLine(t, p, `{"id": "nope_7", "model": "m/x", "response": ""}`)
			return "candidates.jsonl", lines(t, p)
		}, nil, `candidate id "nope_7" names no item`},
		{"candidate without a model", func(t *testing.T, dir string) (string, int) {
			p := filepath.Join(dir, "candidates.jsonl")
			datasetstest.AppendLine(t, p, `{"id": "multiple_0", "response": "x"}`)
			return "candidates.jsonl", lines(t, p)
		}, nil, `missing "model"`},
		{"question that is not JSON", func(t *testing.T, dir string) (string, int) {
			p := filepath.Join(dir, "BFCL_v4_parallel.json")
			datasetstest.AppendLine(t, p, `{"id": "parallel_9", "question": [[`)
			return "BFCL_v4_parallel.json", lines(t, p)
		}, nil, "not a JSON object"},
		// An answer naming a function the item lacks is the item's own
		// defect: skipped, not fatal (TestItemVerdicts). An answer with no
		// question is the files'.
		{"answer with no question", func(t *testing.T, dir string) (string, int) {
			p := filepath.Join(dir, "possible_answer", "BFCL_v4_multiple.json")
			datasetstest.AppendLine(t, p, `{"id": "multiple_99", "ground_truth": [{"reminders.add": {}}]}`)
			return "possible_answer/BFCL_v4_multiple.json", lines(t, p)
		}, nil, `answer id "multiple_99" has no question`},
		{"missing possible answers", func(t *testing.T, dir string) (string, int) {
			os.Remove(filepath.Join(dir, "possible_answer", "BFCL_v4_parallel.json"))
			return "possible_answer/BFCL_v4_parallel.json", 0
		}, nil, "needs a possible-answer file"},
		{"unknown parameter", func(t *testing.T, dir string) (string, int) { return "params", 0 }, map[string]string{"pair": "3"}, `unknown parameter "pair"`},
		{"bad weights", func(t *testing.T, dir string) (string, int) { return "params", 0 }, map[string]string{"intensity_weights": "low=x"}, "intensity_weights"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var file string
			var line int
			dir := datasetstest.CopyFixtures(t, func(dir string) { file, line = tc.edit(t, dir) })
			_, _, err := build(t, datasets.Request{Source: dir, Params: tc.params})
			var ie *datasets.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("err = %v, want an InputError", err)
			}
			if !strings.HasSuffix(ie.File, file) || ie.Line != line || !strings.Contains(ie.Msg, tc.contains) {
				t.Errorf("got %s:%d %q, want %s:%d containing %q", ie.File, ie.Line, ie.Msg, file, line, tc.contains)
			}
		})
	}
}
