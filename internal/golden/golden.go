// Package golden compares a test's output with a golden file under
// testdata/, the way every golden test in benchline does: the test's
// -update flag rewrites the file, and a difference names the file and its
// first differing line.
package golden

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Check compares got with the golden file at path. With update (the
// test's -update flag) it writes got there first, making any directory it
// needs. hint, when not empty, says what to do about a difference (e.g.
// "bump the prompt versions, then go test -update").
func Check(t testing.TB, path, got string, update bool, hint string) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got == string(want) {
		return
	}
	if hint == "" {
		hint = "go test -update rewrites it after checking the change"
	}
	line, g, w := firstDiff(got, string(want))
	t.Errorf("output differs from %s at line %d (%s):\n got: %q\nwant: %q", path, line, hint, g, w)
}

// firstDiff returns the first line (from 1) at which a and b differ, and
// that line of each ("" past the end).
func firstDiff(a, b string) (int, string, string) {
	al, bl := strings.SplitAfter(a, "\n"), strings.SplitAfter(b, "\n")
	for i := 0; ; i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y || i >= len(al) && i >= len(bl) {
			return i + 1, x, y
		}
	}
}
