package judge

import (
	"errors"
	"sync"

	"github.com/benchline/benchline/internal/modelapi"
)

// Deferred lets a sample's judging carry on past questions whose answers
// a batch run deferred (modelapi.ErrDeferred: the request waits for the
// next batch round), so that every question that does not need one of
// those answers is asked, and deferred, in the same round. Without it a
// panel of three judges and two questions would take six rounds of up to
// a day each; with it, one.
//
// An asker calls Keep with each call's error: a deferred answer is kept
// (the first one) and the asker goes on as if the judge had failed; at the
// end the task returns Err, so that the sample runs again next round and
// the outcome built over the missing answers is never used. Outside a
// batch run's deferring pass no error is deferred: Keep is always false
// and the judging is exactly what it would be without it. It is safe for
// concurrent use.
type Deferred struct {
	mu    sync.Mutex
	first error
}

// Keep reports whether err is a deferred answer, remembering the first.
func (d *Deferred) Keep(err error) bool {
	if err == nil || !errors.Is(err, modelapi.ErrDeferred) {
		return false
	}
	d.mu.Lock()
	if d.first == nil {
		d.first = err
	}
	d.mu.Unlock()
	return true
}

// Err returns the first deferred answer's error, or nil when none was.
func (d *Deferred) Err() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.first
}
