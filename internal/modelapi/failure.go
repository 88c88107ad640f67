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
