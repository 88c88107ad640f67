package leaderboard

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/benchline/benchline/internal/names"
	"github.com/benchline/benchline/internal/registry"
)

// FuzzParseBoard parses arbitrary bytes as a board file. It must never
// panic; every error wraps ErrBadBoard and names the file; a board it
// accepts has a valid name and at least one benchmark and model, and
// written back by MarshalBoard it parses to the same board.
func FuzzParseBoard(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "boards", "*.yaml"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{
		"name: b\nbenchmarks: [{dataset: bfcl}]\nmodels: [baseline/reference]\n",
		"name: b\nbenchmarks: [{dataset: bfcl}]\nmodels: [{model: a/b, link: x}]\njudges: {judge: [a/b, c/d]}\n",
		"name: [1]\n", "models: &a [*a]\n", "\xff\xfe", "---\n---\n", "name: b\nbenchmarks: {}\n",
		"name: b\nbenchmarks: [{dataset: medrubric, judges: {judge: []}}]\nmodels: [a/b]\n",
		"name: b\nbenchmarks: [{dataset: bfcl, models: []}]\nmodels: [a/b]\nsettings: {limit: 99999999999999999999}\n",
	} {
		f.Add([]byte(s))
	}
	reg := registry.Default()
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := ParseBoard("fuzz.yaml", data, reg)
		if err != nil {
			if !errors.Is(err, ErrBadBoard) || !strings.Contains(err.Error(), "fuzz.yaml") {
				t.Fatalf("error %q: want ErrBadBoard naming the file", err)
			}
			return
		}
		if names.Name("board", b.Name) != nil || len(b.Benchmarks) == 0 || len(b.Models) == 0 {
			t.Fatalf("accepted %+v", b)
		}
		out, err := MarshalBoard(b)
		if err != nil {
			t.Fatal(err)
		}
		again, err := ParseBoard("fuzz.yaml", out, reg)
		if err != nil {
			t.Fatalf("written back: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(again, b) {
			t.Fatalf("round trip:\n%+v\nwant\n%+v\n%s", again, b, out)
		}
	})
}
