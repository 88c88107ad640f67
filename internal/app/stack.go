package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"strings"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/benchline/benchline/internal/baseline"
	"github.com/benchline/benchline/internal/blob/s3blob"
	"github.com/benchline/benchline/internal/devstack"
	"github.com/benchline/benchline/internal/gateway"
	"github.com/benchline/benchline/internal/registry"
	"github.com/benchline/benchline/internal/webfetch"
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
	// Sources is the address (127.0.0.1:<port>) that serves the web hosts
	// the fixtures cite (benchmark.Demo.Hosts); Hosts names them. Empty
	// when no benchmark has any.
	Sources    string
	Hosts      []string
	sourcesSrv *http.Server
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
	if err := r.startBaselines(o.BaselinePort); err != nil {
		r.Stop()
		return nil, err
	}
	if r.Gateway, err = OpenGateway(st.Config, r.BaselineURL, logger); err != nil {
		r.Stop()
		return nil, err
	}
	web, err := r.startSources(registry.Default())
	if err != nil {
		r.Stop()
		return nil, err
	}
	if o.NoWorker {
		return r, nil
	}
	ws, err := NewWorkers(r.Client, st.Config, r.Store, r.Gateway, WorkerOptions{Web: web})
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

func (r *Running) startBaselines(port int) error {
	srv, err := baseline.New(baseline.Options{References: &StoreReferences{Store: r.Store}})
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

// startSources serves the web hosts the benchmarks' fixtures cite
// (benchmark.Demo.Hosts) on one loopback listener, each request going to
// its Host's handler, and returns the fetcher configuration of the
// stack's workers: each host resolved to that listener and allowed
// (webfetch.Config.Resolve, AllowHosts). Cited URLs, Host headers and
// cache keys stay the fixtures'.
func (r *Running) startSources(reg *registry.Registry) (webfetch.Config, error) {
	hosts := map[string]http.Handler{}
	for _, b := range reg.All() {
		if b.Demo == nil {
			continue
		}
		for h, handler := range b.Demo.Hosts {
			hosts[strings.ToLower(h)] = handler
		}
	}
	if len(hosts) == 0 {
		return webfetch.Config{}, nil
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return webfetch.Config{}, fmt.Errorf("sources server: %w", err)
	}
	r.Sources = l.Addr().String()
	cfg := webfetch.Config{Resolve: map[string]string{}}
	for h := range hosts {
		r.Hosts = append(r.Hosts, h)
		cfg.Resolve[h] = r.Sources
	}
	sort.Strings(r.Hosts)
	cfg.AllowHosts = r.Hosts
	r.sourcesSrv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		host := req.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		if handler, ok := hosts[strings.ToLower(host)]; ok {
			handler.ServeHTTP(w, req)
			return
		}
		http.NotFound(w, req)
	})}
	go func() {
		if err := r.sourcesSrv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			slog.Error("sources server stopped", "err", err)
		}
	}()
	return cfg, nil
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
	if r.Sources != "" {
		fmt.Fprintf(w, "  sources       %s (serves %s, the fixtures' cited pages, to the in-process workers)\n", r.Sources, strings.Join(r.Hosts, ", "))
	}
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
	for _, srv := range []*http.Server{r.baselineSrv, r.sourcesSrv} {
		if srv != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_ = srv.Shutdown(ctx)
			cancel()
		}
	}
	if r.Client != nil {
		r.Client.Close()
	}
	if r.Stack != nil {
		r.Stack.Stop()
	}
}
