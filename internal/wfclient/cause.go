package wfclient

import (
	"errors"
	"strings"

	"go.temporal.io/sdk/temporal"
)

// A CauseError is the application error that ended a workflow, as a user
// reads it. The SDK's ApplicationError.Error annotates every level with
// "(type: …, retryable: …)" and appends its converted cause, which for an
// activity's error is usually the same message again (a Go error becomes an
// ApplicationError of its Go type, "retryable: true" whatever the outer
// error said). CauseError says each distinct message once, outermost first.
type CauseError struct {
	App *temporal.ApplicationError
}

// Error joins the distinct messages of the application error and its
// application-error causes with ": ".
func (e *CauseError) Error() string {
	var parts []string
	text := ""
	for err := error(e.App); err != nil; err = errors.Unwrap(err) {
		var appErr *temporal.ApplicationError
		if !errors.As(err, &appErr) {
			break
		}
		switch m := appErr.Message(); {
		case m == "" || strings.Contains(text, m):
		case text != "" && strings.Contains(m, text):
			parts = []string{m} // the cause repeats everything said so far, and more
		default:
			parts = append(parts, m)
		}
		text = strings.Join(parts, ": ")
		err = appErr
	}
	if text == "" {
		return e.App.Error()
	}
	return text
}

// Unwrap returns the application error.
func (e *CauseError) Unwrap() error { return e.App }
