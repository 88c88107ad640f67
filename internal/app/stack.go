package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/benchline/benchline/internal/baseline"
	"github.com/benchline/benchline/internal/blob/s3blob"
	"github.com/benchline/benchline/internal/devstack"
	"github.com/benchline/benchline/internal/gateway"
)

// Running is the embedded stack with a connected client, store, baseline
// model server, gateway and worker.
type Running struct {
	Stack       *devstack.Stack
	Client      client.Client
	Store       *s3blob.Store
	Gateway     *gateway.Gateway
	Workers     []worker.Worker
	BaselineURL string // http://127.0.0.1:<port>/v1
	baselineSrv *http.Server
}

// StackOptions configure StartStack.
type StackOptions struct {
	devstack.Options
	// BaselinePort is the baseline model server's port (0: a free one).
	BaselinePort int
	// NoWorker starts no in-process worker (workers run as their own
	// processes, e.g. to measure them).
	NoWorker bool
}

// StartStack starts the embedded stack, the baseline model server (serving
// references from the store) and an in-process worker on it.
func StartStack(ctx context.Context, o StackOptions, logger *slog.Logger) (*Running, error) {
	st, err := devstack.Start(ctx, o.Options)
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
	if err := r.startBaselines(o.BaselinePort, logger); err != nil {
		r.Stop()
		return nil, err
	}
	if r.Gateway, err = OpenGateway(st.Config, r.BaselineURL, logger); err != nil {
		r.Stop()
		return nil, err
	}
	if o.NoWorker {
		return r, nil
	}
	ws, err := NewWorkers(r.Client, st.Config, r.Store, r.Gateway, WorkerOptions{})
	if err != nil {
		r.Stop()
		return nil, err
	}
	for _, w := range ws {
		if err := w.Start(); err != nil {
			r.Stop()
			return nil, fmt.Errorf("start worker: %w", err)
		}
		r.Workers = append(r.Workers, w)
	}
	return r, nil
}

func (r *Running) startBaselines(port int, logger *slog.Logger) error {
	srv, err := baseline.New(baseline.Options{References: &StoreReferences{Store: r.Store, Logger: logger}})
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return fmt.Errorf("baseline server: %w", err)
	}
	r.BaselineURL = "http://" + l.Addr().String() + "/v1"
	r.baselineSrv = &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := r.baselineSrv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			slog.Error("baseline server stopped", "err", err)
		}
	}()
	return nil
}

// PrintAddresses writes where each part of the stack listens.
func (r *Running) PrintAddresses(w io.Writer) {
	cfg := r.Stack.Config
	fmt.Fprintf(w, "  Temporal      %s (namespace %s, task queue %s)\n", cfg.Temporal.Address, cfg.Temporal.Namespace, cfg.Temporal.TaskQueue)
	if r.Stack.TemporalUI != "" {
		fmt.Fprintf(w, "  Temporal UI   %s\n", r.Stack.TemporalUI)
	}
	fmt.Fprintf(w, "  S3            %s (bucket %s, path-style)\n", cfg.S3.Endpoint, cfg.S3.Bucket)
	fmt.Fprintf(w, "  baselines     %s (deterministic baseline models, not LLMs)\n", r.BaselineURL)
	if len(r.Workers) > 0 {
		fmt.Fprintf(w, "  workers       in-process on task queues %s and %s\n", cfg.Temporal.TaskQueue, QueueSandbox)
	} else {
		fmt.Fprintf(w, "  workers       none in-process: run `benchline worker`\n")
	}
}

// Stop stops the worker, the baseline server, the client and the stack.
func (r *Running) Stop() {
	for _, w := range r.Workers {
		w.Stop()
	}
	if r.baselineSrv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = r.baselineSrv.Shutdown(ctx)
		cancel()
	}
	if r.Client != nil {
		r.Client.Close()
	}
	if r.Stack != nil {
		r.Stack.Stop()
	}
}
