package modelapi

import (
	"errors"
	"fmt"
	"strings"
)

// ErrModelFailure marks an error that means the model itself failed on the
// request (a permanent error the request caused: a bad request, a prompt
// too long, a content filter), as opposed to an infrastructure failure
// (rate limits, time-outs, auth, quota) that says nothing about the model.
// The gateway's errors match it with errors.Is; tasks and builders test
// for it without linking the gateway:
//
//	if errors.Is(err, modelapi.ErrModelFailure) { record a wrong answer }
var ErrModelFailure = errors.New("modelapi: the model failed on the request")

// ErrDeferred marks the error of a request a batch run's pass deferred to
// a batch instead of sending it (the gateway's Deferring view): there is
// no answer yet, the sample runs again once the batch has answered. The
// gateway's errors match it with errors.Is, so that a task can carry on
// with the questions that do not need the answer (see judge.Deferred) and
// put them all in the same batch round.
var ErrDeferred = errors.New("modelapi: the request was deferred to a batch")

// ReasonOf is what a record keeps of err: the short stable reason of an
// error that has one (the gateway's "<class>: <message>"), else err's text.
func ReasonOf(err error) string {
	var r interface{ Reason() string }
	if errors.As(err, &r) {
		return r.Reason()
	}
	return err.Error()
}

// BaselineProvider is the provider name of the built-in deterministic
// baseline models (internal/baseline): "baseline/<model>".
const BaselineProvider = "baseline"

// ParseModel splits "<provider>/<model>".
func ParseModel(name string) (provider, model string, err error) {
	provider, model, ok := strings.Cut(name, "/")
	if !ok || provider == "" || model == "" {
		return "", "", fmt.Errorf("model %q: want <provider>/<model>", name)
	}
	return provider, model, nil
}
