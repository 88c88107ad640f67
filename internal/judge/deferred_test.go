package judge

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/benchline/benchline/internal/modelapi"
)

// deferring is a judge whose every request is deferred to a batch.
type deferring struct{}

func (deferring) Complete(_ context.Context, req modelapi.Request) (modelapi.Response, error) {
	return modelapi.Response{}, fmt.Errorf("gateway: %s: %w", req.Model, modelapi.ErrDeferred)
}

func TestDeferred(t *testing.T) {
	var d Deferred
	if d.Keep(nil) || d.Keep(errors.New("down")) || d.Keep(fmt.Errorf("x: %w", modelapi.ErrModelFailure)) || d.Err() != nil {
		t.Fatal("kept an error that is not a deferral")
	}
	// Ask wraps the deferral; the first of several concurrent ones is kept.
	var v struct{}
	_, first := Ask(context.Background(), deferring{}, Request{Judge: "j/a"}, &v)
	if !d.Keep(first) {
		t.Fatalf("did not keep %v", first)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			_, err := Ask(context.Background(), deferring{}, Request{Judge: "j/b"}, &v)
			if !d.Keep(err) {
				t.Errorf("did not keep %v", err)
			}
		})
	}
	wg.Wait()
	if err := d.Err(); err != first || !errors.Is(err, modelapi.ErrDeferred) {
		t.Errorf("Err() = %v, want the first deferral %v", err, first)
	}
}
