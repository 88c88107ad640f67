// Package shareddata finds the public reference data (BFCL, ReportEval, …)
// that lives beside the checkout in ../shared/data, for conformance tests and
// benchmarks. The data is never copied into the repository.
package shareddata

import (
	"os"
	"path/filepath"
	"testing"
)

// Find returns the directory shared/data/<sub>: $BENCHLINE_SHARED_DATA/<sub>
// when that variable is set, else the first shared/data/<sub> found beside
// the working directory or one of its ancestors. ok is false when absent.
func Find(sub string) (dir string, ok bool) {
	if env := os.Getenv("BENCHLINE_SHARED_DATA"); env != "" {
		d := filepath.Join(env, sub)
		_, err := os.Stat(d)
		return d, err == nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for d := wd; ; d = filepath.Dir(d) {
		cand := filepath.Join(d, "shared", "data", sub)
		if st, err := os.Stat(cand); err == nil && st.IsDir() {
			return cand, true
		}
		if filepath.Dir(d) == d {
			return "", false
		}
	}
}

// Require returns shared/data/<sub> or skips the test with a message saying
// where the data is looked for.
func Require(tb testing.TB, sub string) string {
	tb.Helper()
	d, ok := Find(sub)
	if !ok {
		tb.Skipf("reference data shared/data/%s not found (set BENCHLINE_SHARED_DATA or check out ../shared beside the repo); skipping conformance test", sub)
	}
	return d
}

// Upstream returns the full upstream release named by the environment
// variable env (e.g. BENCHLINE_UPSTREAM_BFCL: a checkout of a benchmark's
// data folder as its authors publish it), or skips the test with a message
// saying what to set. Upstream-as-published tests build the small slice
// they keep in testdata/ always, and the full release only through here.
func Upstream(tb testing.TB, env, what string) string {
	tb.Helper()
	d := os.Getenv(env)
	if d == "" {
		tb.Skipf("full upstream release not checked: set %s to %s to build it whole and check its counts", env, what)
	}
	if st, err := os.Stat(d); err != nil || !st.IsDir() {
		tb.Fatalf("%s=%s: not a directory (%v)", env, d, err)
	}
	return d
}
