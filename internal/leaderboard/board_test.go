package leaderboard

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/benchline/benchline/internal/access"
	"github.com/benchline/benchline/internal/registry"
)

func TestParseBoardGood(t *testing.T) {
	b, err := ReadBoard(filepath.Join("testdata", "boards", "good.yaml"), registry.Default())
	if err != nil {
		t.Fatal(err)
	}
	if b.Name != "demo-1" || b.Title != "A board" || len(b.Benchmarks) != 3 || len(b.Models) != 2 {
		t.Fatalf("board: %+v", b)
	}
	// bfcl has no judge roles: the board's judges do not reach it.
	if got := b.Benchmarks[0]; got.Version != "latest" || got.Judges != nil {
		t.Errorf("bfcl: %+v", got)
	}
	// medrubric's roles are judge, proposer and checker: the board's judge
	// panel (sorted as judge.Panel sorts) and not rmtbench's user.
	if got := b.Benchmarks[1]; got.Version != "0123abcd" || !reflect.DeepEqual(got.Judges, map[string]string{"judge": "baseline/judge,baseline/judge-yes"}) {
		t.Errorf("medrubric: %+v", got)
	}
	if b.Benchmarks[0].Models != nil || !b.Benchmarks[0].Evaluates("openai/gpt-4o-mini") {
		t.Errorf("bfcl evaluates every model: %v", b.Benchmarks[0].Models)
	}
	if got := b.Benchmarks[2].Models; !reflect.DeepEqual(got, []string{"baseline/reference"}) || b.Benchmarks[2].Evaluates("openai/gpt-4o-mini") {
		t.Errorf("rmtbench models: %v", got)
	}
	// rmtbench's own judges replace the board's entirely.
	if got := b.Benchmarks[2]; !reflect.DeepEqual(got.Judges, map[string]string{"judge": "baseline/judge,baseline/judge-yes"}) {
		t.Errorf("rmtbench: %+v", got)
	}
	if m := b.Models[1]; m.Model != "openai/gpt-4o-mini" || m.DisplayName != "GPT-4o mini" || m.Organisation != "OpenAI" ||
		m.Licence != "proprietary" || m.Parameters != "undisclosed" || m.Link != "https://example.com/gpt-4o-mini" {
		t.Errorf("model metadata: %+v", m)
	}
	if b.Params.Temperature == nil || *b.Params.Temperature != 0 || b.Params.MaxTokens != 256 || b.Seed == nil || *b.Seed != 7 ||
		b.Limit != 20 || b.ShardSize != 100 {
		t.Errorf("settings: %+v seed %v", b.Params, b.Seed)
	}
	// settings.batch: true; the second model says batch: false.
	if !b.Batch || !b.BatchFor(b.Models[0]) || b.BatchFor(b.Models[1]) {
		t.Errorf("batch: board %v, models %v %v", b.Batch, b.BatchFor(b.Models[0]), b.BatchFor(b.Models[1]))
	}
	refs := b.ModelRefs()
	want := []ModelRef{{"models[0]", "baseline/reference"}, {"models[1]", "openai/gpt-4o-mini"},
		{"benchmarks[1].judges.judge", "baseline/judge"}, {"benchmarks[1].judges.judge", "baseline/judge-yes"},
		{"benchmarks[2].judges.judge", "baseline/judge"}, {"benchmarks[2].judges.judge", "baseline/judge-yes"}}
	if !reflect.DeepEqual(refs, want) {
		t.Errorf("ModelRefs = %v, want %v", refs, want)
	}
}

func TestParseBoardBad(t *testing.T) {
	tests := []struct {
		file string
		want string // what the error must say after the file name
	}{
		{"bad-name.yaml", `name: board "my board!": invalid name: want letters, digits`},
		{"unknown-key.yaml", `field moddels not found`},
		{"unknown-dataset.yaml", `benchmarks[1].dataset: "No_Such" is not a registered benchmark with an evaluation (known: bfcl, ifevalcode, trbench, medrubric, omnicloze, reporteval, rmtbench, synthetic) nor a task file's name`},
		{"not-evaluated.yaml", `benchmarks[0].dataset: "toolpref" is not a registered benchmark with an evaluation`},
		{"bad-version.yaml", `benchmarks[0].version: "v1.2": want a version id or latest`},
		{"bad-model.yaml", `models[1]: "gpt-4o": want PROVIDER/MODEL`},
		{"model-unknown-key.yaml", `unknown key "size"`},
		{"dup-model.yaml", `models[1]: baseline/reference is also models[0]`},
		{"bad-judge.yaml", `judges.judge: "judge": want PROVIDER/MODEL`},
		{"bad-limit.yaml", `settings.limit: -3: want a positive integer`},
		{"bad-setting.yaml", `field temprature not found`},
		{"no-models.yaml", `models: want at least one`},
		{"empty.yaml", `empty board file`},
		{"bad-benchmark-model.yaml", `benchmarks[0].models[1]: "baseline/first" is not one of the board's models`},
		{"dup-benchmark.yaml", `benchmarks[1]: bfcl@latest is also benchmarks[0]`},
		{"bad-access.yaml", `access: access: email_domains[0]: "user@example.com" is not a valid entry`},
		{"access-typo.yaml", `field group not found`},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join("testdata", "boards", tc.file)
			_, err := ReadBoard(path, registry.Default())
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, ErrBadBoard) {
				t.Errorf("%v does not wrap ErrBadBoard", err)
			}
			if msg := err.Error(); !strings.Contains(msg, path+": ") || !strings.Contains(msg, tc.want) {
				t.Errorf("error %q\nwant the file %s and %q", msg, path, tc.want)
			}
		})
	}
}

// TestReadAccess reads a board's name and access: key alone (serve has no
// registry), and ParseBoard keeps the same policy.
func TestReadAccess(t *testing.T) {
	path := filepath.Join("testdata", "boards", "access.yaml")
	name, p, err := ReadAccess(path)
	want := access.Policy{Groups: []string{"eval-team"}, EmailDomains: []string{"example.com"}, Tokens: []string{"ci-scores"}}
	if err != nil || name != "private" || !reflect.DeepEqual(p, want) {
		t.Fatalf("ReadAccess: %q %+v %v", name, p, err)
	}
	b, err := ReadBoard(path, registry.Default())
	if err != nil || !reflect.DeepEqual(b.Access, want) {
		t.Fatalf("ReadBoard: %+v %v", b.Access, err)
	}
	for _, bad := range []string{"bad-access.yaml", "access-typo.yaml", "bad-name.yaml"} {
		if _, _, err := ReadAccess(filepath.Join("testdata", "boards", bad)); !errors.Is(err, ErrBadBoard) {
			t.Errorf("ReadAccess(%s): %v", bad, err)
		}
	}
}

func TestReadBoardMissingFile(t *testing.T) {
	_, err := ReadBoard(filepath.Join("testdata", "boards", "nosuch.yaml"), registry.Default())
	if err == nil || !strings.Contains(err.Error(), "nosuch.yaml") {
		t.Fatalf("err = %v", err)
	}
}

// TestMarshalBoardRoundTrips: a board written by MarshalBoard parses back
// to the same board.
func TestMarshalBoardRoundTrips(t *testing.T) {
	b, err := ReadBoard(filepath.Join("testdata", "boards", "good.yaml"), registry.Default())
	if err != nil {
		t.Fatal(err)
	}
	out, err := MarshalBoard(b)
	if err != nil {
		t.Fatal(err)
	}
	again, err := ParseBoard(b.File, out, registry.Default())
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !reflect.DeepEqual(again, b) {
		t.Fatalf("round trip:\n%+v\nwant\n%+v\nfile:\n%s", again, b, out)
	}
}

// TestBoardDigest: a board's identity is its content: the file it was
// read from does not count, any change of content does.
func TestBoardDigest(t *testing.T) {
	b := Board{Name: "nightly", File: "a.yaml", Benchmarks: []BoardBenchmark{{Dataset: "bfcl", Version: "latest"}}, Models: []Model{{Model: "baseline/reference"}}}
	c := b
	c.File = "elsewhere/b.yaml"
	if b.Digest() != c.Digest() {
		t.Error("the same board from two files has two digests")
	}
	c.Models = []Model{{Model: "baseline/empty"}}
	if b.Digest() == c.Digest() {
		t.Error("two boards with one name and different models have one digest")
	}
}
