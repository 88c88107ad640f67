package scorerstest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/benchline/benchline/internal/modelapi"
)

// Completer is a task's model gateway (scorers.Completer).
type Completer interface {
	Complete(ctx context.Context, req modelapi.Request) (modelapi.Response, error)
}

// Batch plays a batch run's rounds over a fake gateway, as the eval
// activity's batch mode does with the real one (gateway.Deferring): a
// request not answered in an earlier round is not sent but deferred (its
// error matches modelapi.ErrDeferred), and Round answers every request
// deferred since the last round. A task run again after each round gets
// one step further, until a pass defers nothing. It is safe for
// concurrent use.
type Batch struct {
	Models Completer // answers the requests of each round

	mu       sync.Mutex
	answered map[string]bool
	pending  map[string]bool
}

// Complete implements Completer: inner's answer to a request answered in
// an earlier round, else a deferral.
func (b *Batch) Complete(ctx context.Context, req modelapi.Request) (modelapi.Response, error) {
	key, err := json.Marshal(req)
	if err != nil {
		return modelapi.Response{}, err
	}
	b.mu.Lock()
	if b.answered[string(key)] {
		b.mu.Unlock()
		return b.Models.Complete(ctx, req)
	}
	if b.pending == nil {
		b.pending = map[string]bool{}
	}
	b.pending[string(key)] = true
	b.mu.Unlock()
	return modelapi.Response{}, fmt.Errorf("scorerstest: %s: %w", req.Model, modelapi.ErrDeferred)
}

// Round answers the requests deferred since the last round and returns
// how many there were.
func (b *Batch) Round() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.answered == nil {
		b.answered = map[string]bool{}
	}
	n := len(b.pending)
	for k := range b.pending {
		b.answered[k] = true
	}
	clear(b.pending)
	return n
}

// Rounds runs pass (a task's Evaluate over b) until a pass defers
// nothing, and returns that pass's result and the number of rounds
// before it. A pass that deferred a request must fail with the deferral
// (a task never returns an outcome built without an answer); one that
// keeps deferring after limit rounds is an error.
func Rounds[T any](b *Batch, limit int, pass func() (T, error)) (T, int, error) {
	for round := 0; ; round++ {
		out, err := pass()
		n := b.Round()
		if n == 0 {
			return out, round, err
		}
		if !errors.Is(err, modelapi.ErrDeferred) {
			return out, round, fmt.Errorf("round %d deferred %d requests but the pass returned %v, not the deferral", round+1, n, err)
		}
		if round+1 >= limit {
			return out, round + 1, fmt.Errorf("still deferring after %d rounds", limit)
		}
	}
}

// CheckRounds runs pass over b as Rounds does (at most 50 rounds) and
// fails t unless it ended without an error after want rounds; it returns
// the last pass's result.
func CheckRounds[T any](t testing.TB, b *Batch, want int, pass func() (T, error)) T {
	t.Helper()
	out, rounds, err := Rounds(b, 50, pass)
	if err != nil {
		t.Fatal(err)
	}
	if rounds != want {
		t.Errorf("%d rounds, want %d", rounds, want)
	}
	return out
}
