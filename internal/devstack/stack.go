package devstack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/benchline/benchline/internal/app"
	"github.com/benchline/benchline/internal/baseline"
	"github.com/benchline/benchline/internal/benchmark"
	"github.com/benchline/benchline/internal/blob/s3blob"
	"github.com/benchline/benchline/internal/gateway"
	"github.com/benchline/benchline/internal/metrics"
	"github.com/benchline/benchline/internal/registry"
	"github.com/benchline/benchline/internal/webfetch"
)

// Running is the embedded stack with a connected client, store, baseline
// model server, gateway and worker.
type Running struct {
	Stack       *Stack
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

	metricsCloser io.Closer // flushes the SDK's metrics; nil without
}

// StackOptions configure StartStack.
type StackOptions struct {
	Options
	// BaselinePort is the baseline model server's port (0: a free one).
	BaselinePort int
	// NoWorker starts no in-process worker (workers run as their own
	// processes, e.g. to measure them).
	NoWorker bool
	// Metrics, when set, counts the in-process worker's model calls,
	// samples, shards and sandbox runs and the Temporal SDK's metrics
	// (served by the caller: `benchline dev --metrics-addr`).
	Metrics *metrics.Metrics
}

// StartStack starts the embedded stack, the baseline model server (serving
// references from the store) and an in-process worker on it.
func StartStack(ctx context.Context, o StackOptions, logger *slog.Logger) (*Running, error) {
	st, err := Start(ctx, o.Options)
	if err != nil {
		return nil, err
	}
	r := &Running{Stack: st}
	var mh client.MetricsHandler
	if o.Metrics != nil {
		mh, r.metricsCloser = o.Metrics.SDKHandler(logger)
	}
	if r.Client, err = app.DialWith(st.Config, logger, mh); err != nil {
		r.Stop()
		return nil, err
	}
	if r.Store, err = app.OpenStore(ctx, st.Config); err != nil {
		r.Stop()
		return nil, err
	}
	if err := r.startBaselines(o.BaselinePort, logger); err != nil {
		r.Stop()
		return nil, err
	}
	if r.Gateway, err = app.OpenObservedGateway(st.Config, r.BaselineURL, logger, o.Metrics); err != nil {
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
	ws, err := app.NewWorkers(r.Client, st.Config, r.Store, r.Gateway, app.WorkerOptions{Web: web, Metrics: o.Metrics, Logger: logger})
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
	srv, err := baseline.New(baseline.Options{References: &app.StoreReferences{Store: r.Store, Logger: logger}})
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
func (r *Running) startSources(reg *benchmark.Registry) (webfetch.Config, error) {
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

// PrintAddresses writes where each part of the stack listens, and the
// credentials it set up.
func (r *Running) PrintAddresses(w io.Writer) {
	cfg := r.Stack.Config
	fmt.Fprintf(w, "  Temporal      %s (namespace %s, task queue %s)\n", cfg.Temporal.Address, cfg.Temporal.Namespace, cfg.Temporal.TaskQueue)
	if r.Stack.TemporalUI != "" {
		fmt.Fprintf(w, "  Temporal UI   %s\n", r.Stack.TemporalUI)
	}
	fmt.Fprintf(w, "  S3            %s (bucket %s, path-style, region %s)\n", cfg.S3.Endpoint, cfg.S3.Bucket, cfg.S3.Region)
	fmt.Fprintf(w, "  credentials   AWS_ACCESS_KEY_ID=%s AWS_SECRET_ACCESS_KEY=%s (this stack's S3 server, loopback only)\n",
		cfg.S3.AccessKeyID, cfg.S3.SecretAccessKey.Reveal())
	fmt.Fprintf(w, "  baselines     %s (deterministic baseline models, not LLMs)\n", r.BaselineURL)
	if r.Sources != "" {
		fmt.Fprintf(w, "  sources       %s (serves %s, the fixtures' cited pages, to the in-process workers)\n", r.Sources, strings.Join(r.Hosts, ", "))
	}
	providers := "providers: none configured beyond openai (OPENAI_API_KEY) and baseline"
	if f := cfg.Models.ProvidersFile; f != "" {
		providers = "providers file " + f
	}
	if len(r.Workers) > 0 {
		fmt.Fprintf(w, "  workers       in-process on task queues %s and %s (%s)\n", cfg.Temporal.TaskQueue, app.QueueSandbox, providers)
	} else {
		fmt.Fprintf(w, "  workers       none in-process: run 'benchline worker'\n")
	}
}

// EnvVars are the variables that point every benchline command (and
// `benchline worker`) at this stack, as `benchline dev --env-file` writes
// them. Variables that could point elsewhere (a configuration file, a
// Temporal Cloud key) are emptied, which means "not given".
func (r *Running) EnvVars() [][2]string {
	cfg := r.Stack.Config
	vars := [][2]string{
		{"BENCHLINE_CONFIG", ""},
		{"TEMPORAL_ADDRESS", cfg.Temporal.Address},
		{"TEMPORAL_NAMESPACE", cfg.Temporal.Namespace},
		{"TEMPORAL_API_KEY", ""},
		{"TEMPORAL_TLS_CERT", ""},
		{"TEMPORAL_TLS_KEY", ""},
		{"TEMPORAL_TLS_CA", ""},
		{"TEMPORAL_TLS_SERVER_NAME", ""},
		{"BENCHLINE_TASK_QUEUE", cfg.Temporal.TaskQueue},
		{"BENCHLINE_S3_ENDPOINT", cfg.S3.Endpoint},
		{"BENCHLINE_S3_BUCKET", cfg.S3.Bucket},
		{"BENCHLINE_S3_PREFIX", cfg.S3.Prefix},
		{"BENCHLINE_S3_PATH_STYLE", strconv.FormatBool(cfg.S3.PathStyle)},
		{"AWS_ACCESS_KEY_ID", cfg.S3.AccessKeyID},
		{"AWS_SECRET_ACCESS_KEY", cfg.S3.SecretAccessKey.Reveal()},
		{"AWS_REGION", cfg.S3.Region},
		{"BENCHLINE_BASELINE_URL", r.BaselineURL},
		{"BENCHLINE_PROVIDERS", cfg.Models.ProvidersFile},
	}
	if n := cfg.Models.WorkerShare; n > 0 {
		vars = append(vars, [2]string{"BENCHLINE_WORKER_SHARE", strconv.Itoa(n)})
	}
	if d := cfg.Models.CacheTTL; d > 0 {
		vars = append(vars, [2]string{"BENCHLINE_CACHE_TTL", d.String()})
	}
	return vars
}

// WriteEnvFile writes EnvVars to path as KEY=value lines (mode 0600: it
// holds the S3 credentials), replacing it atomically. A value with
// characters a shell would interpret is single-quoted, so
// `set -a; . FILE; set +a` reads every value back as written.
func (r *Running) WriteEnvFile(path string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# benchline dev stack, written %s; use: set -a; . %s; set +a\n", time.Now().UTC().Format(time.RFC3339), path)
	for _, kv := range r.EnvVars() {
		fmt.Fprintf(&b, "%s=%s\n", kv[0], shellValue(kv[1]))
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, ".benchline-env-*")
	if err != nil {
		return fmt.Errorf("env file: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(b.String()); err != nil {
		tmp.Close()
		return fmt.Errorf("env file: %w", err)
	}
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("env file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("env file: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("env file: %w", err)
	}
	return nil
}

// plainValue matches values a shell reads back unchanged without quotes.
var plainValue = regexp.MustCompile(`^[A-Za-z0-9_./:@%+=,-]*$`)

func shellValue(v string) string {
	if plainValue.MatchString(v) {
		return v
	}
	return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
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
	if r.metricsCloser != nil {
		_ = r.metricsCloser.Close()
	}
	if r.Stack != nil {
		r.Stack.Stop()
	}
}
