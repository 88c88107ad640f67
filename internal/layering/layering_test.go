package layering

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/benchline/benchline"

// graph is the import graph of some packages and everything they link
// (test files excluded), by import path.
type graph struct {
	roots   []string            // the packages the patterns matched
	imports map[string][]string // every package in the closure
}

// load runs go list in the module root for patterns; with test, the
// closure is that of the packages' tests (go list -test).
func load(t *testing.T, test bool, patterns ...string) graph {
	t.Helper()
	gotool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go tool is not on PATH; the layering rules need go list")
	}
	root := moduleRoot(t, gotool)
	// Test variants' paths hold a space ("p [p.test]"): fields are split
	// by tabs, imports by "|".
	args := []string{"list", "-deps", "-f", "{{.ImportPath}}\t{{.DepOnly}}\t{{join .Imports \"|\"}}"}
	if test {
		args = append(args, "-test")
	}
	args = append(args, patterns...)
	cmd := exec.Command(gotool, args...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v\n%s", strings.Join(patterns, " "), err, stderr.String())
	}
	g := graph{imports: map[string][]string{}}
	for line := range strings.Lines(string(out)) {
		f := strings.Split(strings.TrimRight(line, "\n"), "\t")
		if len(f) < 3 {
			continue
		}
		if f[2] != "" {
			g.imports[f[0]] = strings.Split(f[2], "|")
		}
		// With test, the root is each test binary's main package ("p.test"),
		// which links every test variant of p.
		if f[1] == "false" && (!test || strings.HasSuffix(f[0], ".test")) {
			g.roots = append(g.roots, f[0])
		}
	}
	if len(g.roots) == 0 {
		t.Fatalf("go list %s matched no package", strings.Join(patterns, " "))
	}
	return g
}

func moduleRoot(t *testing.T, gotool string) string {
	t.Helper()
	out, err := exec.Command(gotool, "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == "/dev/null" {
		t.Fatal("not inside the benchline module")
	}
	return filepath.Dir(mod)
}

// path returns an import chain from pkg to a package other than pkg whose
// path is forbidden or lies below it, nil if there is none.
func (g graph) path(pkg, forbidden string) []string {
	hit := func(p string) bool {
		p, _, _ = strings.Cut(p, " ") // a test variant, "p [q.test]", is p
		return p == forbidden || strings.HasPrefix(p, forbidden+"/")
	}
	prev := map[string]string{pkg: ""}
	queue := []string{pkg}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, q := range g.imports[p] {
			if _, seen := prev[q]; seen {
				continue
			}
			prev[q] = p
			if hit(q) {
				chain := []string{q}
				for r := p; r != ""; r = prev[r] {
					chain = append(chain, r)
				}
				slices.Reverse(chain)
				return chain
			}
			queue = append(queue, q)
		}
	}
	return nil
}

func TestLayering(t *testing.T) {
	tests := []struct {
		name      string
		patterns  []string
		forbidden string
		// linked inverts the rule: every package must link forbidden. It
		// shows the check sees a dependency that is there.
		linked bool
		// test checks the closure of the packages' tests (go list -test).
		test bool
	}{
		{"run plans, workflows and tasks do not link the AWS SDK",
			[]string{"./internal/runs", "./workflows", "./scorers/..."}, "github.com/aws/aws-sdk-go-v2", false, false},
		{"tasks do not link the baseline model server",
			[]string{"./scorers/..."}, module + "/internal/baseline", false, false},
		{"the model-call types and reference keys are leaves",
			[]string{"./internal/modelapi", "./internal/refkey"}, module, false, false},
		{"no package of the binary links DuckDB (only the integration tests read releases with it)",
			[]string{"./cmd/...", "./internal/release", "./activities"}, "github.com/marcboeker/go-duckdb", false, false},
		{"the S3 backend links the AWS SDK (the check sees a real dependency)",
			[]string{"./internal/blob/s3blob"}, "github.com/aws/aws-sdk-go-v2", true, false},
		// Benchmarks sit below the engine: a builder or a task links
		// neither the activities, the workflows nor the list of benchmarks
		// (which would link every other benchmark), and a scorer reads no
		// dataset source.
		{"builders and tasks do not link the activities",
			[]string{"./datasets/...", "./scorers/..."}, module + "/activities", false, false},
		{"builders and tasks do not link the workflows",
			[]string{"./datasets/...", "./scorers/..."}, module + "/workflows", false, false},
		{"builders and tasks do not link the list of benchmarks",
			[]string{"./datasets/...", "./scorers/..."}, module + "/internal/registry", false, false},
		{"builders and tasks do not link Temporal",
			[]string{"./datasets/...", "./scorers/..."}, "go.temporal.io", false, false},
		{"a benchmark's task links no other benchmark's (shared judge helpers live in internal/judge)",
			[]string{"./scorers/rmtbench", "./scorers/omnicloze", "./scorers/reporteval"}, module + "/scorers/medrubric", false, false},
		{"scorers import no datasets package",
			[]string{"./scorers/..."}, module + "/datasets", false, false},
		// A builder's unit tests (datasets/datasetstest) need none of the
		// engine; tests that run the BuildDataset workflow
		// (activities/activitiestest.Live: medrubric, omnicloze, toolpref)
		// or evaluate through the gateway (reporteval, rmtbench) link it by
		// choice.
		{"a builder's tests link no activities",
			[]string{"./datasets/bfcl", "./datasets/ifevalcode", "./datasets/trbench", "./datasets/synthetic", "./datasets/datasetstest"}, module + "/activities", false, true},
		{"a builder's tests link no workflows",
			[]string{"./datasets/bfcl", "./datasets/ifevalcode", "./datasets/trbench", "./datasets/synthetic", "./datasets/datasetstest"}, module + "/workflows", false, true},
		{"a builder's tests link no Temporal package",
			[]string{"./datasets/bfcl", "./datasets/ifevalcode", "./datasets/trbench", "./datasets/synthetic", "./datasets/datasetstest"}, "go.temporal.io", false, true},
		{"a generating builder's tests run the workflow (the test check sees a test dependency)",
			[]string{"./datasets/medrubric"}, module + "/workflows", true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := load(t, tc.test, tc.patterns...)
			for _, pkg := range g.roots {
				chain := g.path(pkg, tc.forbidden)
				switch {
				case tc.linked && chain == nil:
					t.Errorf("%s does not link %s", pkg, tc.forbidden)
				case !tc.linked && chain != nil:
					t.Errorf("%s links %s: %s", pkg, tc.forbidden, strings.Join(chain, " -> "))
				}
			}
		})
	}
}

// TestTaskFileScorers: the task files' scorers link two benchmarks'
// packages, scorers/bfcl for its AST checker (tool_calls) and
// scorers/medrubric for its rubric formula (rubric), and no other
// benchmark's (docs/ARCHITECTURE.md, task files).
func TestTaskFileScorers(t *testing.T) {
	g := load(t, false, "./scorers/taskfile")
	allowed := []string{module + "/scorers", module + "/scorers/taskfile", module + "/scorers/bfcl", module + "/scorers/medrubric"}
	linked := false
	for _, root := range g.roots {
		for p := range g.imports {
			if p == module+"/scorers/bfcl" {
				linked = true
			}
			if strings.HasPrefix(p, module+"/scorers/") && !slices.Contains(allowed, p) {
				t.Errorf("%s links %s: %s", root, p, strings.Join(g.path(root, p), " -> "))
			}
		}
	}
	if !linked {
		t.Errorf("scorers/taskfile does not link scorers/bfcl: the check sees nothing")
	}
}
