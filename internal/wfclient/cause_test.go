package wfclient_test

import (
	"errors"
	"fmt"
	"github.com/benchline/benchline/internal/wfclient"
	"strings"
	"testing"

	failurepb "go.temporal.io/api/failure/v1"
	"go.temporal.io/sdk/temporal"

	"github.com/benchline/benchline/activities"
	"github.com/benchline/benchline/datasets"
)

// asClientSees sends err through Temporal's failure converter as an
// activity failure, the way a client receives a failed workflow's cause.
func asClientSees(err error) error {
	fc := temporal.GetDefaultFailureConverter()
	activity := &failurepb.Failure{Message: "activity error", Cause: fc.ErrorToFailure(err),
		FailureInfo: &failurepb.Failure_ActivityFailureInfo{ActivityFailureInfo: &failurepb.ActivityFailureInfo{
			ActivityType: nil, ActivityId: "5"}}}
	return fmt.Errorf("workflow execution error (type: BuildDataset): %w", fc.FailureToError(activity))
}

// TestCauseSaysItOnce checks that a non-retryable bad-input failure reads
// as its message once, without Temporal's "(type: …, retryable: …)"
// annotations and the converted cause that repeats it (finding 9: each
// build error was printed twice, once saying "retryable: true"), and that
// errors.As still finds the application error.
func TestCauseSaysItOnce(t *testing.T) {
	ie := &datasets.InputError{File: "/data/BFCL_v4_multiple.json", Line: 2, Msg: "unexpected end of JSON input"}
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"bad input with its cause", temporal.NewNonRetryableApplicationError(ie.Error(), activities.ErrTypeInvalidInput, ie), ie.Error()},
		{"wrapped cause with more to say", temporal.NewNonRetryableApplicationError("plan build-bfcl", activities.ErrTypeInvalidInput, ie), "plan build-bfcl: " + ie.Error()},
		{"no cause", temporal.NewApplicationError("manifest mismatch", "Mismatch"), "manifest mismatch"},
		{"cause repeating the message", temporal.NewNonRetryableApplicationError("part 3", activities.ErrTypeInvalidInput, errors.New("part 3: bad row 7")), "part 3: bad row 7"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := fmt.Errorf("build of bfcl (workflow build-bfcl-1): %w", wfclient.Cause(asClientSees(tc.err)))
			got := err.Error()
			if want := "build of bfcl (workflow build-bfcl-1): " + tc.want; got != want {
				t.Errorf("error reads\n  %s\nwant\n  %s", got, want)
			}
			if strings.Contains(got, "retryable") || strings.Count(got, "unexpected end of JSON input") > 1 {
				t.Errorf("error repeats itself or shows Temporal's annotations: %s", got)
			}
			var appErr *temporal.ApplicationError
			if !errors.As(err, &appErr) || appErr.Type() != tc.err.(*temporal.ApplicationError).Type() {
				t.Errorf("errors.As does not find the application error of type %q in %v", tc.err.(*temporal.ApplicationError).Type(), err)
			}
		})
	}
}
