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
