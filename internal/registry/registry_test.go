package registry_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/benchline/benchline/internal/benchmark"
	"github.com/benchline/benchline/internal/registry"
	"github.com/benchline/benchline/schemas"
)

// TestDefault checks the list: every benchmark validates, every task has
// its builder and every builder its task or is built-only, demo models are
// baselines, and the derived lookups agree with the list.
func TestDefault(t *testing.T) {
	reg := registry.Default()
	tasks := reg.WithDeps(benchmark.Deps{})
	for _, name := range reg.Names() {
		if b, err := reg.Builder(name); err != nil || b.Name() != name {
			t.Errorf("builder %s: %v", name, err)
		}
	}
	for _, b := range reg.All() {
		_, err := tasks.Task(b.Name())
		if (err == nil) != (b.NewTask != nil) {
			t.Errorf("%s: task registered %v, NewTask set %v", b.Name(), err == nil, b.NewTask != nil)
		}
		if b.Demo != nil {
			for _, m := range b.Demo.Models {
				if !strings.HasPrefix(m, "baseline/") {
					t.Errorf("%s: demo model %s is not a baseline", b.Name(), m)
				}
			}
		}
	}
	want := map[string]bool{"bfcl-ast": false, "ifevalcode": false, "reporteval-sections": false}
	for _, s := range reg.Scorers() {
		if _, ok := want[s.Name]; ok {
			want[s.Name] = true
		}
	}
	for name, found := range want {
		if !found {
			t.Errorf("line scorer %s (a contract in design.md) is not registered", name)
		}
	}
}

// TestEveryTableHasColumns checks every registered builder's table is one
// schemas knows the columns of, so reading its parts through
// catalog.Checked checks their columns (a part of another table fails).
func TestEveryTableHasColumns(t *testing.T) {
	for _, b := range registry.Default().All() {
		tbl := b.Builder.Schema()
		cols, ok := schemas.Columns(tbl)
		if !ok || len(cols) == 0 {
			t.Errorf("%s: schemas.Columns(%s v%d) unknown: declare it with schemas.Declare beside its row type", b.Name(), tbl.Name, tbl.Version)
		}
	}
}

// TestNoOtherBenchmarkList checks that no non-test package outside the
// benchmarks' own (datasets/<x>, scorers/<x>) and the list imports a
// benchmark's package: the list is the only place that names them. The
// pipeline benchmark (internal/perf's bench commands) drives the synthetic
// load, which is not a benchmark of models; `benchline task check` runs the
// task-file engine (datasets/taskfile, scorers/taskfile, and the
// translations of lm-evaluation-harness tasks and promptfoo configs into
// task files, scorers/lmeval and scorers/promptfoo), which is no benchmark
// but how users write theirs, with no stack; the demo (internal/devstack)
// builds its lm-evaluation-harness task and promptfoo config with the same
// translations.
func TestNoOtherBenchmarkList(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go tool on PATH: cannot list imports")
	}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}:{{join .Imports " "}}`, "github.com/benchline/benchline/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const mod = "github.com/benchline/benchline/"
	allowed := map[string]bool{
		"internal/perf -> datasets/synthetic": true,
		"internal/perf -> scorers/synthetic":  true,
		"cmd/benchline -> datasets/taskfile":  true,
		"cmd/benchline -> scorers/taskfile":   true,
		// lm-evaluation-harness tasks and promptfoo configs are task files
		// in other formats: task check/convert/compat and dataset build
		// translate them.
		"cmd/benchline -> scorers/lmeval":    true,
		"cmd/benchline -> scorers/promptfoo": true,
		// The demo builds its lm-evaluation-harness task and promptfoo
		// config through the same conversions as dataset build --task
		// (lmeval.WriteBeside, promptfoo.WriteBeside).
		"internal/devstack -> scorers/lmeval":    true,
		"internal/devstack -> scorers/promptfoo": true,
		// A task-file run's page shows the task file stored with its
		// version (taskfile.ReadTask, CutTask).
		"internal/site -> datasets/taskfile": true,
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, ":")
		pkg = strings.TrimPrefix(pkg, mod)
		if strings.HasPrefix(pkg, "datasets/") || strings.HasPrefix(pkg, "scorers/") || pkg == "internal/registry" {
			continue
		}
		for _, imp := range strings.Fields(imports) {
			imp = strings.TrimPrefix(imp, mod)
			if (strings.HasPrefix(imp, "datasets/") || strings.HasPrefix(imp, "scorers/")) && !allowed[pkg+" -> "+imp] {
				t.Errorf("%s imports %s: name benchmarks only in internal/registry's list", pkg, imp)
			}
		}
	}
}
