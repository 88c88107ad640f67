package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/devstack"
)

// Running is the embedded stack with a connected client, store and worker.
type Running struct {
	Stack  *devstack.Stack
	Client client.Client
	Store  *blob.S3
	Worker worker.Worker
}

// StartStack starts the embedded stack and an in-process worker on it.
func StartStack(ctx context.Context, o devstack.Options, logger *slog.Logger) (*Running, error) {
	st, err := devstack.Start(ctx, o)
	if err != nil {
		return nil, err
	}
	r := &Running{Stack: st}
	if r.Client, err = Dial(st.Config, logger); err != nil {
		r.Stop()
		return nil, err
	}
	if r.Store, err = OpenStore(ctx, st.Config); err != nil {
		r.Stop()
		return nil, err
	}
	r.Worker = NewWorker(r.Client, st.Config, r.Store, WorkerOptions{})
	if err := r.Worker.Start(); err != nil {
		r.Stop()
		return nil, fmt.Errorf("start worker: %w", err)
	}
	return r, nil
}

// PrintAddresses writes where each part of the stack listens.
func (r *Running) PrintAddresses(w io.Writer) {
	cfg := r.Stack.Config
	fmt.Fprintf(w, "  Temporal      %s (namespace %s, task queue %s)\n", cfg.Temporal.Address, cfg.Temporal.Namespace, cfg.Temporal.TaskQueue)
	if r.Stack.TemporalUI != "" {
		fmt.Fprintf(w, "  Temporal UI   %s\n", r.Stack.TemporalUI)
	}
	fmt.Fprintf(w, "  S3            %s (bucket %s, path-style)\n", cfg.S3.Endpoint, cfg.S3.Bucket)
	fmt.Fprintf(w, "  worker        in-process on task queue %s\n", cfg.Temporal.TaskQueue)
}

// Stop stops the worker, the client and the stack.
func (r *Running) Stop() {
	if r.Worker != nil {
		r.Worker.Stop()
	}
	if r.Client != nil {
		r.Client.Close()
	}
	if r.Stack != nil {
		r.Stack.Stop()
	}
}
