package main

import (
	"bytes"
	"testing"

	"github.com/benchline/benchline/activities"
)

// TestPrintBatches: `runs show`'s lines about a batch run's batches say how
// they ended and why requests failed; an interactive run has none.
func TestPrintBatches(t *testing.T) {
	for _, tc := range []struct {
		name string
		rep  *activities.BatchReport
		want string
	}{
		{"interactive", nil, ""},
		{"all answered", &activities.BatchReport{Batches: 2, Status: map[string]int{"completed": 2}, Requests: 200},
			"batches: 2 (2 completed), 200 requests\n"},
		{"expired and failed lines", &activities.BatchReport{Batches: 4, Status: map[string]int{"expired": 2, "completed": 2}, Requests: 260,
			Failed: 130, Fallback: 0, Reasons: []activities.BatchFailureReason{
				{Class: "retryable-server", Requests: 100, Example: "batch b-1: batch_expired: the batch expired before this request was answered"},
				{Class: "retryable-server", Status: 500, Requests: 30, Example: "batch b-3: baseline: injected failed line"}}},
			"batches: 4 (2 completed, 2 expired), 260 requests\n" +
				"requests whose batch tries are over: 130 failed (4xx lines are the model's failures, others infrastructure errors), 0 called interactively (fallback)\n" +
				"  100 retryable-server, e.g. batch b-1: batch_expired: the batch expired before this request was answered\n" +
				"  30 retryable-server (HTTP 500), e.g. batch b-3: baseline: injected failed line\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			printBatches(&b, tc.rep)
			if b.String() != tc.want {
				t.Errorf("got\n%s\nwant\n%s", b.String(), tc.want)
			}
		})
	}
}
