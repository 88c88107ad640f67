package registry_test

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSeventhBenchmark adds a benchmark that exists only in this test
// (testdata/seventh: multiple-choice questions, written as
// docs/ADDING_A_BENCHMARK.md teaches) and proves the doc's promise: its
// files lie in datasets/mcq/ and scorers/mcq/ only, the list gains one
// line, and with nothing else changed the benchmark and the binary build, the
// list's tests pass with it, its own unit tests pass, and its builder's
// tests link no activities, workflows or Temporal package. The files are
// laid over the module with the go tool's -overlay, so the tree is not
// touched.
func TestSeventhBenchmark(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds and tests a benchmark through the go tool")
	}
	gotool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go tool is not on PATH")
	}
	root := moduleRoot(t, gotool)
	src, err := filepath.Abs(filepath.Join("testdata", "seventh"))
	if err != nil {
		t.Fatal(err)
	}
	overlay := map[string]string{}
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Base(p) == "README.md" {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		rel = filepath.ToSlash(rel)
		if !strings.HasPrefix(rel, "datasets/mcq/") && !strings.HasPrefix(rel, "scorers/mcq/") {
			t.Errorf("%s: a new benchmark's files lie in datasets/<name>/ and scorers/<name>/ only", rel)
		}
		overlay[filepath.Join(root, rel)] = p
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	overlay[filepath.Join(root, "internal", "registry", "benchmarks.go")] = withListLine(t, root)
	overlayFile := filepath.Join(t.TempDir(), "overlay.json")
	b, _ := json.Marshal(map[string]any{"Replace": overlay})
	if err := os.WriteFile(overlayFile, b, 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(dir, name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out.String())
		}
		return out.String()
	}
	goCmd := func(dir string, args ...string) string { t.Helper(); return run(dir, gotool, args...) }
	ov := "-overlay=" + overlayFile
	// (go vet runs in each package's folder, which the overlaid ones lack:
	// they are built, and tested with -vet=off.)
	goCmd(root, "build", ov, "./datasets/mcq", "./scorers/mcq", "./cmd/benchline")
	// The list's own tests, with the seventh benchmark in it.
	goCmd(root, "test", ov, "-vet=off", "-count=1", "-run", "^(TestDefault|TestEveryTableHasColumns|TestNoOtherBenchmarkList)$", "./internal/registry")
	// Its unit tests, run in its folder of testdata (its fixtures are
	// there; the overlaid package has no folder on disk).
	bin := t.TempDir()
	for _, pkg := range []string{"datasets/mcq", "scorers/mcq"} {
		exe := filepath.Join(bin, strings.ReplaceAll(pkg, "/", "-")+".test")
		goCmd(root, "test", ov, "-vet=off", "-c", "-o", exe, "./"+pkg)
		run(filepath.Join(src, filepath.FromSlash(pkg)), exe, "-test.count=1")
	}
	// What a builder's unit test links.
	for _, dep := range strings.Fields(goCmd(root, "list", ov, "-deps", "-test", "./datasets/mcq")) {
		if dep == module+"/activities" || dep == module+"/workflows" || strings.HasPrefix(dep, "go.temporal.io/") {
			t.Errorf("the mcq builder's tests link %s", dep)
		}
	}
}

const module = "github.com/benchline/benchline"

// withListLine writes the list with the mcq benchmark's line (and its
// import) added, and returns the file's path: the one change outside the
// benchmark's folders.
func withListLine(t *testing.T, root string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "internal", "registry", "benchmarks.go"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	imp := "\t\"github.com/benchline/benchline/datasets/bfcl\"\n"
	line := "\t\tsynthetic.Benchmark,\n"
	if !strings.Contains(s, imp) || !strings.Contains(s, line) {
		t.Fatal("benchmarks.go: the list's layout changed; update withListLine")
	}
	s = strings.Replace(s, imp, imp+"\t\"github.com/benchline/benchline/datasets/mcq\"\n", 1)
	s = strings.Replace(s, line, line+"\t\tmcq.Benchmark,\n", 1)
	p := filepath.Join(t.TempDir(), "benchmarks.go")
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func moduleRoot(t *testing.T, gotool string) string {
	t.Helper()
	out, err := exec.Command(gotool, "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}
