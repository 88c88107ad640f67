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

// load runs go list in the module root for patterns.
func load(t *testing.T, patterns ...string) graph {
	t.Helper()
	gotool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go tool is not on PATH; the layering rules need go list")
	}
	root := moduleRoot(t, gotool)
	args := append([]string{"list", "-deps", "-f", "{{.ImportPath}} {{.DepOnly}} {{join .Imports \" \"}}"}, patterns...)
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
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		g.imports[f[0]] = f[2:]
		if f[1] == "false" {
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
	hit := func(p string) bool { return p == forbidden || strings.HasPrefix(p, forbidden+"/") }
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
	}{
		{"run plans, workflows and tasks do not link the AWS SDK",
			[]string{"./internal/runs", "./workflows", "./scorers/..."}, "github.com/aws/aws-sdk-go-v2", false},
		{"tasks do not link the baseline model server",
			[]string{"./scorers/..."}, module + "/internal/baseline", false},
		{"the model-call types and reference keys are leaves",
			[]string{"./internal/modelapi", "./internal/refkey"}, module, false},
		{"no package of the binary links DuckDB (only the integration tests read releases with it)",
			[]string{"./cmd/...", "./internal/release", "./activities"}, "github.com/marcboeker/go-duckdb", false},
		{"the S3 backend links the AWS SDK (the check sees a real dependency)",
			[]string{"./internal/blob/s3blob"}, "github.com/aws/aws-sdk-go-v2", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := load(t, tc.patterns...)
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
