package main

import (
	"slices"
	"testing"
)

// TestWithMadvFree: GODEBUG gets madvdontneed=0 unless it sets
// madvdontneed already (the operator's choice, or the exec done).
// TestBatchShardKilled (internal/integration) checks the running worker's
// environment.
func TestWithMadvFree(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want []string // nil: no exec
	}{
		{[]string{"PATH=/bin"}, []string{"PATH=/bin", "GODEBUG=madvdontneed=0"}},
		{[]string{"GODEBUG=", "PATH=/bin"}, []string{"GODEBUG=madvdontneed=0", "PATH=/bin"}},
		{[]string{"GODEBUG=gctrace=1"}, []string{"GODEBUG=gctrace=1,madvdontneed=0"}},
		{[]string{"GODEBUG=gctrace=1,madvdontneed=1"}, nil}, // the operator's choice
		{[]string{"GODEBUG=madvdontneed=0"}, nil},           // after the exec: no loop
		{[]string{"XGODEBUG=madvdontneed=1"}, []string{"XGODEBUG=madvdontneed=1", "GODEBUG=madvdontneed=0"}},
	} {
		got, ok := withMadvFree(tc.in)
		if ok != (tc.want != nil) || !slices.Equal(got, tc.want) {
			t.Errorf("withMadvFree(%q) = %q, %v; want %q", tc.in, got, ok, tc.want)
		}
	}
}

// TestGCSettings: the worker's GC percent applies only under a soft
// memory limit, and the environment's GOGC and GOMEMLIMIT win.
func TestGCSettings(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	for _, tc := range []struct {
		name        string
		mb, pct     int
		getenv      func(string) string
		limit       int64
		wantPercent int
	}{
		{"defaults", 512, 200, env(), 512 << 20, 200},
		{"no limit: Go's GC", 0, 200, env(), 0, 0},
		{"GOMEMLIMIT set", 512, 200, env("GOMEMLIMIT", "1GiB"), 0, 200},
		{"GOMEMLIMIT, no flag limit", 0, 200, env("GOMEMLIMIT", "1GiB"), 0, 200},
		{"GOGC set", 512, 200, env("GOGC", "100"), 512 << 20, 0},
	} {
		limit, pct := gcSettings(tc.mb, tc.pct, tc.getenv)
		if limit != tc.limit || pct != tc.wantPercent {
			t.Errorf("%s: limit %d, percent %d; want %d, %d", tc.name, limit, pct, tc.limit, tc.wantPercent)
		}
	}
}
