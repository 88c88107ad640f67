package activities

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/benchmark/benchmarktest"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/limits"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/source"
	"github.com/benchline/benchline/schemas"
)

// sourceBuilder is a builder whose Plan only opens its source and one file
// in it, as every builder does first.
type sourceBuilder struct{}

func (sourceBuilder) Name() string          { return "src" }
func (sourceBuilder) Version() string       { return "1" }
func (sourceBuilder) Schema() schemas.Table { return schemas.Table{Name: "t", Version: 1} }
func (sourceBuilder) Plan(ctx context.Context, env datasets.Env, req datasets.Request) (datasets.Plan, error) {
	loc, err := source.Parse(ctx, req.Source, env.OpenS3)
	if err != nil {
		return datasets.Plan{}, err
	}
	if _, err := source.Probe(ctx, loc, []string{"a.json"}); err != nil {
		return datasets.Plan{}, err
	}
	return datasets.Plan{}, errors.New("not planned")
}
func (sourceBuilder) WritePart(context.Context, datasets.Env, datasets.Plan, datasets.Part, string, func(int64)) (pq.FileInfo, error) {
	return pq.FileInfo{}, errors.New("not written")
}
func (sourceBuilder) Card(catalog.Manifest) string { return "" }

// TestPlanBuildSourceFailures: a source that is missing, answers 404 or
// refuses fails PlanBuild non-retryably (InvalidInput) with an error naming
// the path or URL and the status; a source answering 5xx is left to
// Temporal's bounded retries.
func TestPlanBuildSourceFailures(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/down/"):
			http.Error(w, "try later", http.StatusServiceUnavailable)
		case strings.HasPrefix(r.URL.Path, "/private/"):
			http.Error(w, "no", http.StatusForbidden)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	tests := []struct {
		name, source string
		invalid      bool
		says         []string
	}{
		{"missing directory", "./no-such-dir", true, []string{"no-such-dir", "does not exist"}},
		{"URL that 404s", srv.URL + "/nothing-here/", true, []string{srv.URL + "/nothing-here/a.json", "404 Not Found"}},
		{"URL that refuses", srv.URL + "/private/", true, []string{srv.URL + "/private/a.json", "403 Forbidden"}},
		{"URL that is down", srv.URL + "/down/", false, []string{srv.URL + "/down/a.json", "503 Service Unavailable"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := &Datasets{Store: blobtest.NewMemory(), Benchmarks: benchmarktest.Registry(t, benchmarktest.Builder(sourceBuilder{}))}
			_, err := a.PlanBuild(context.Background(), PlanBuildInput{Dataset: "src", Request: datasets.Request{Source: tc.source}})
			if err == nil {
				t.Fatal("PlanBuild succeeded")
			}
			if got := isInvalidInput(err); got != tc.invalid {
				t.Errorf("PlanBuild error %v: non-retryable invalid input %v, want %v", err, got, tc.invalid)
			}
			for _, s := range tc.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("PlanBuild error %q does not say %q", err, s)
				}
			}
		})
	}
}

func isInvalidInput(err error) bool {
	var ae *temporal.ApplicationError
	return errors.As(err, &ae) && ae.Type() == ErrTypeInvalidInput && ae.NonRetryable()
}

// TestClassify: each class of failure is retried or not, as the failure
// table in docs/ARCHITECTURE.md says.
func TestClassify(t *testing.T) {
	tests := []struct {
		name    string
		err     error
		invalid bool
	}{
		{"bad input", &datasets.InputError{File: "x.json", Line: 2, Msg: "not a JSON object"}, true},
		{"missing source", fmt.Errorf("bfcl: %w", source.ErrNotFound), true},
		{"refused source", &source.HTTPError{URL: "http://h/x", Code: 403, Status: "403 Forbidden"}, true},
		{"source down", &source.HTTPError{URL: "http://h/x", Code: 502, Status: "502 Bad Gateway"}, false},
		{"manifest mismatch", fmt.Errorf("read: %w", catalog.ErrMismatch), true},
		{"unknown dataset", fmt.Errorf("resolve: %w", catalog.ErrNoDataset), true},
		{"store down", errors.New("s3blob: get k: connection refused"), false},
		{"no bucket", fmt.Errorf("s3blob: list datasets/: %w", blob.ErrNoBucket), true},
		{"store refuses a name", fmt.Errorf("s3blob: get datasets/../x: %w", blob.ErrInvalid), true},
		{"file over its limit", fmt.Errorf("board.yaml: %w", limits.ErrTooLarge), true},
		{"store refuses the credentials", fmt.Errorf("s3blob: list datasets/: %w", blob.ErrDenied), false},
		{"store full", fmt.Errorf("s3blob: put datasets/d/vabc/data/part-00004.parquet: %w", blob.ErrFull), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := classify(tc.err)
			for sentinel, typ := range map[error]string{blob.ErrDenied: ErrTypeAuth, blob.ErrFull: ErrTypeStoreFull} {
				var ae *temporal.ApplicationError
				if errors.Is(tc.err, sentinel) && (!errors.As(err, &ae) || ae.Type() != typ || !ae.NonRetryable()) {
					t.Fatalf("classify(%v) = %v, want a non-retryable %s error", tc.err, err, typ)
				}
			}
			if got := isInvalidInput(err); got != tc.invalid {
				t.Fatalf("classify(%v) = %v: non-retryable %v, want %v", tc.err, err, got, tc.invalid)
			}
			if !strings.Contains(err.Error(), tc.err.Error()) {
				t.Errorf("classify(%v) lost the message: %v", tc.err, err)
			}
		})
	}
}

// stagingBuilder stages its source's files, then fails with err.
type stagingBuilder struct {
	sourceBuilder
	err  error
	rows int // -1: plan no rows
}

func (b stagingBuilder) Plan(ctx context.Context, env datasets.Env, req datasets.Request) (datasets.Plan, error) {
	loc, err := source.Parse(ctx, req.Source, env.OpenS3)
	if err != nil {
		return datasets.Plan{}, err
	}
	for _, n := range []string{"a.json", "b.json"} {
		if _, err := datasets.Stage(ctx, env, loc, n); err != nil {
			return datasets.Plan{}, err
		}
	}
	if b.err != nil {
		return datasets.Plan{}, b.err
	}
	if b.rows < 0 {
		return datasets.Plan{Dataset: "src", Version: "v1"}, nil
	}
	return datasets.Plan{Dataset: "src", Version: "v1", Parts: []datasets.Part{{Label: "all", Rows: 2}}}, nil
}

// TestFailedPlanBuildRemovesWhatItStaged: a build that fails for good
// (bad input) deletes the staged sources it wrote, and only those (a file
// another build staged before stays); a failure Temporal retries keeps
// them for the retry.
func TestFailedPlanBuildRemovesWhatItStaged(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"a.json": "{\"a\": 1}\n", "b.json": "{\"b\": 2}\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		err  error
		kept int // staged objects left, besides the one staged before
	}{
		{"bad input", &datasets.InputError{File: "b.json", Line: 1, Msg: "bad row"}, 0},
		{"store down", errors.New("s3blob: put: connection refused"), 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			mem := blobtest.NewMemory()
			other := datasets.StagedKey("0000000000000000000000000000000000000000000000000000000000000000")
			if err := blob.PutBytes(ctx, mem, other, []byte("staged by another build")); err != nil {
				t.Fatal(err)
			}
			a := &Datasets{Store: mem, Benchmarks: benchmarktest.Registry(t, benchmarktest.Builder(stagingBuilder{err: tc.err}))}
			if _, err := a.PlanBuild(ctx, PlanBuildInput{Dataset: "src", Request: datasets.Request{Source: dir}}); err == nil {
				t.Fatal("PlanBuild succeeded")
			}
			infos, err := mem.List(ctx, "staging/sources/")
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, i := range infos {
				keys = append(keys, i.Key)
			}
			if !slices.Contains(keys, other) {
				t.Errorf("the file another build staged was deleted: %v", keys)
			}
			if len(keys)-1 != tc.kept {
				t.Errorf("staged objects left: %v, want %d besides %s", keys, tc.kept, other)
			}
		})
	}
}

// TestPlanBuildRefusesAnEmptySource: a source that yields no rows fails
// PlanBuild at once, naming the source, and leaves nothing staged.
func TestPlanBuildRefusesAnEmptySource(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, name := range []string{"a.json", "b.json"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mem := blobtest.NewMemory()
	a := &Datasets{Store: mem, Benchmarks: benchmarktest.Registry(t, benchmarktest.Builder(stagingBuilder{rows: -1}))}
	_, err := a.PlanBuild(ctx, PlanBuildInput{Dataset: "src", Request: datasets.Request{Source: dir}})
	if !isNonRetryable(err) || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "yields no rows") {
		t.Fatalf("err = %v, want a non-retryable error naming %s", err, dir)
	}
	if infos, _ := mem.List(ctx, datasets.StagedKey("")); len(infos) != 0 {
		t.Errorf("staged objects left: %v", infos)
	}
}

// TestPlanBuildReportsWhatItStaged: a PlanBuild that succeeds returns the
// staged sources it wrote, not those another build had staged first, and
// DiscardStaged (run by the workflow when the build fails later) deletes
// exactly those; it refuses a key outside staging/sources/.
func TestPlanBuildReportsWhatItStaged(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	bodies := map[string]string{"a.json": "{\"a\": 1}\n", "b.json": "{\"b\": 2}\n"}
	for name, body := range bodies {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	key := func(body string) string {
		sum := sha256.Sum256([]byte(body))
		return datasets.StagedKey(hex.EncodeToString(sum[:]))
	}
	mem := blobtest.NewMemory()
	if err := blob.PutBytes(ctx, mem, key(bodies["a.json"]), []byte(bodies["a.json"])); err != nil { // staged by another build
		t.Fatal(err)
	}
	a := &Datasets{Store: mem, Benchmarks: benchmarktest.Registry(t, benchmarktest.Builder(stagingBuilder{}))}
	res, err := a.PlanBuild(ctx, PlanBuildInput{Dataset: "src", Request: datasets.Request{Source: dir}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{key(bodies["b.json"])}; !slices.Equal(res.Staged, want) {
		t.Fatalf("PlanBuild staged %v, want %v (a.json was staged before)", res.Staged, want)
	}
	if n, err := a.DiscardStaged(ctx, DiscardStagedInput{Keys: res.Staged}); err != nil || n != 1 {
		t.Fatalf("DiscardStaged: %d, %v", n, err)
	}
	for body, want := range map[string]bool{bodies["a.json"]: true, bodies["b.json"]: false} {
		if ok, err := blob.Exists(ctx, mem, key(body)); err != nil || ok != want {
			t.Errorf("%s exists %v (%v), want %v", key(body), ok, err, want)
		}
	}
	if _, err := a.DiscardStaged(ctx, DiscardStagedInput{Keys: []string{"datasets/src/latest"}}); err == nil {
		t.Error("DiscardStaged deleted a key outside staging/sources/")
	}
}

// TestDiscardStagedParts: with the version named, DiscardStaged deletes
// the parts an unpublished version's build wrote (a failed build leaves
// none), leaves a published version's alone, and refuses a name that
// would reach outside datasets/.
func TestDiscardStagedParts(t *testing.T) {
	ctx := context.Background()
	mem := blobtest.NewMemory()
	a := &Datasets{Store: mem}
	for _, v := range []string{"abc", "def"} {
		for i := range 3 {
			if err := blob.PutBytes(ctx, mem, catalog.PartKey("d", v, i), []byte("part")); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := blob.PutJSON(ctx, mem, catalog.ManifestKey("d", "def"), catalog.Manifest{Name: "d", Version: "def"}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		version string
		deleted int
		left    int
	}{{"abc", 3, 0}, {"def", 0, 3}} {
		n, err := a.DiscardStaged(ctx, DiscardStagedInput{Dataset: "d", Version: tc.version, Parts: 5})
		if err != nil || n != tc.deleted {
			t.Fatalf("DiscardStaged of d@%s = %d, %v: want %d deleted", tc.version, n, err, tc.deleted)
		}
		if left, err := mem.List(ctx, catalog.Dir("d", tc.version)+"data/"); err != nil || len(left) != tc.left {
			t.Fatalf("d@%s: %d parts left (%v), want %d", tc.version, len(left), err, tc.left)
		}
	}
	for _, bad := range []DiscardStagedInput{{Dataset: "..", Version: "abc"}, {Dataset: "d", Version: "../../runs"}, {Dataset: "d"}} {
		if _, err := a.DiscardStaged(ctx, bad); !isInvalidInput(err) {
			t.Errorf("DiscardStaged(%+v) = %v, want it refused as invalid", bad, err)
		}
	}
}
