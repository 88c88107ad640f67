package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that keeps what Check reports.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
	panic(r) // stops Check, as t.Fatalf would
}
func (r *recorder) Fatal(args ...any) { r.Fatalf("%s", fmt.Sprint(args...)) }

func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "out.golden")
	tests := []struct {
		name   string
		got    string
		update bool
		hint   string
		want   string // the report, "" for none
	}{
		{"missing file", "a\n", false, "", "(run go test -update to create it)"},
		{"update writes, in a new directory", "a\nb\n", true, "", ""},
		{"same", "a\nb\n", false, "", ""},
		{"a line differs", "a\nc\n", false, "", `at line 2 (go test -update rewrites it after checking the change):
 got: "c\n"
want: "b\n"`},
		{"got is shorter", "a\n", false, "bump the version", `at line 2 (bump the version):
 got: ""
want: "b\n"`},
		{"a missing final newline", "a\nb", false, "", `at line 2 (go test -update rewrites it after checking the change):
 got: "b"
want: "b\n"`},
	}
	for _, tc := range tests {
		r := &recorder{TB: t}
		func() {
			defer func() {
				if p := recover(); p != nil && p != r {
					panic(p)
				}
			}()
			Check(r, path, tc.got, tc.update, tc.hint)
		}()
		report := strings.Join(r.errs, "\n")
		if tc.want == "" && report != "" || tc.want != "" && !strings.HasSuffix(report, tc.want) {
			t.Errorf("%s: report %q, want one ending %q", tc.name, report, tc.want)
		}
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "a\nb\n" {
		t.Errorf("golden file %q, %v", b, err)
	}
}
