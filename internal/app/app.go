// Package app wires benchline's parts together from a Config: the Temporal
// client, the object store, the model gateway (with the baseline models'
// references) and the workers with every workflow and activity registered.
// That is all it does: the workflow client is internal/wfclient, the
// embedded stack and the demo internal/devstack, the benches internal/perf.
// The commands in cmd/benchline and the integration tests share it, so
// tests run the production wiring.
package app

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"github.com/benchline/benchline/activities"
	"github.com/benchline/benchline/internal/benchmark"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/s3blob"
	"github.com/benchline/benchline/internal/config"
	"github.com/benchline/benchline/internal/gateway"
	"github.com/benchline/benchline/internal/metrics"
	"github.com/benchline/benchline/internal/registry"
	"github.com/benchline/benchline/internal/sandbox"
	"github.com/benchline/benchline/internal/sandbox/lang"
	"github.com/benchline/benchline/internal/source"
	"github.com/benchline/benchline/internal/webfetch"
	"github.com/benchline/benchline/workflows"
)

// Dial connects to Temporal.
func Dial(cfg config.Config, logger *slog.Logger) (client.Client, error) {
	return DialWith(cfg, logger, nil)
}

// DialWith connects to Temporal, reporting the SDK's metrics to mh (nil:
// none; see metrics.Metrics.SDKHandler).
func DialWith(cfg config.Config, logger *slog.Logger, mh client.MetricsHandler) (client.Client, error) {
	opts := client.Options{HostPort: cfg.Temporal.Address, Namespace: cfg.Temporal.Namespace, MetricsHandler: mh}
	if logger != nil {
		opts.Logger = log.NewStructuredLogger(logger)
	}
	tc, err := cfg.Temporal.ClientTLS()
	if err != nil {
		return nil, err
	}
	opts.ConnectionOptions.TLS = tc
	if !cfg.Temporal.APIKey.IsZero() {
		opts.Credentials = client.NewAPIKeyStaticCredentials(cfg.Temporal.APIKey.Reveal())
	}
	c, err := client.Dial(opts)
	if err != nil {
		if hint := tlsHint(cfg.Temporal, tc != nil, err); hint != "" {
			return nil, fmt.Errorf("connect to Temporal at %s: %w (%s)", cfg.Temporal.Address, err, hint)
		}
		return nil, fmt.Errorf("connect to Temporal at %s (is `benchline dev` running, or TEMPORAL_ADDRESS set?): %w", cfg.Temporal.Address, err)
	}
	return c, nil
}

// tlsHint says which TLS setting a failed connection points at, or "" when
// it does not look like TLS. gRPC reports a handshake's end only as text,
// and a server that requires mutual TLS often just closes the connection:
// a plain-text client reads no HTTP/2 preface, a client without a
// certificate finishes its side of a TLS 1.3 handshake and then finds the
// connection closed.
func tlsHint(t config.Temporal, tlsOn bool, err error) string {
	msg := err.Error()
	closed := strings.Contains(msg, "error reading server preface") || strings.Contains(msg, "broken pipe") ||
		strings.Contains(msg, "connection reset by peer") || strings.HasSuffix(strings.TrimSuffix(msg, `"`), "EOF")
	switch {
	case strings.Contains(msg, "x509: "):
		ca := "unset: the system's roots"
		if t.TLS.CAFile != "" {
			ca = "now " + t.TLS.CAFile
		}
		return fmt.Sprintf("the server's TLS certificate is not trusted: temporal.tls_ca_file (TEMPORAL_TLS_CA; %s) must name the CA that signed it, "+
			"and temporal.tls_server_name (TEMPORAL_TLS_SERVER_NAME) a name it carries", ca)
	case !tlsOn && closed:
		return "the server closed the connection: does it require TLS? set temporal.tls_ca_file (TEMPORAL_TLS_CA), " +
			"and for mutual TLS temporal.tls_cert_file and temporal.tls_key_file (docs/DEPLOY.md)"
	case tlsOn && t.TLS.CertFile == "" && (closed || strings.Contains(msg, "tls: certificate required")):
		return "the server refused a TLS client without a certificate: it requires mutual TLS; " +
			"set temporal.tls_cert_file and temporal.tls_key_file (TEMPORAL_TLS_CERT, TEMPORAL_TLS_KEY)"
	case tlsOn && (closed || strings.Contains(msg, "remote error: tls: ")):
		return fmt.Sprintf("the server refused the TLS client certificate temporal.tls_cert_file %s: is it signed by a CA the server trusts for clients?", t.TLS.CertFile)
	}
	return ""
}

// OpenStore returns the configured object store.
func OpenStore(ctx context.Context, cfg config.Config) (*s3blob.Store, error) {
	return s3blob.New(ctx, cfg.S3)
}

// S3Opener opens other buckets (s3:// sources) with the same endpoint and
// credentials as the main store.
func S3Opener(cfg config.Config) source.S3Opener {
	return func(ctx context.Context, bucket, prefix string) (blob.Store, error) {
		c := cfg.S3
		c.Bucket, c.Prefix = bucket, prefix
		return s3blob.New(ctx, c)
	}
}

// HeartbeatThrottle is the longest a worker holds an activity's heartbeat
// before sending it to the server. The SDK's default is 0.8 of the
// activity's heartbeat timeout (24 s for shards): the server answers a
// heartbeat with the cancel request, so a cancelled shard went on for up
// to that long, and its progress (heartbeat details) lagged as much.
// Shards heartbeat every 2 s; so the server hears them every 2 s.
const HeartbeatThrottle = 2 * time.Second

// Task queues a worker can serve.
const (
	// QueueSandbox runs deferred scorers that execute untrusted code, so
	// sandbox capacity scales apart from model calls.
	QueueSandbox = "sandbox"
)

// WorkerOptions tune a worker.
type WorkerOptions struct {
	// Queues lists what this process serves: "main" (the configured task
	// queue: workflows, dataset builds, generation) and "sandbox" [both].
	Queues []string
	// MaxConcurrentActivities bounds activities running at once on the
	// main queue [8].
	MaxConcurrentActivities int
	// SampleConcurrency bounds samples in flight per shard [16].
	SampleConcurrency int
	// CheckpointInterval is the least time between checkpoints of a shard's
	// results [5s] (activities.Eval.CheckpointInterval).
	CheckpointInterval time.Duration
	// SandboxConcurrency bounds sandbox scoring activities at once [1];
	// each activity runs up to one program per CPU.
	SandboxConcurrency int
	// Benchmarks are the benchmarks served [registry.Default()].
	Benchmarks *benchmark.Registry
	// Web configures the fetcher of cited web pages the tasks get
	// (benchmark.Deps.Web), cached in the store [webfetch's defaults:
	// public addresses only]. The embedded stack resolves the fixtures'
	// hosts here (benchmark.Demo.Hosts).
	Web webfetch.Config
	// Metrics, when set, counts samples, shard durations and sandbox runs
	// (the gateway's calls are counted by the gateway it was opened with:
	// OpenGateway's observer).
	Metrics *metrics.Metrics
	// Logger receives the activities' records (shard attempts); nil discards.
	Logger *slog.Logger
}

// NewWorkers returns one worker per queue served, with every workflow and
// activity registered. Registration is explicit, here only.
func NewWorkers(c client.Client, cfg config.Config, store blob.Store, gw *gateway.Gateway, o WorkerOptions) ([]worker.Worker, error) {
	if len(o.Queues) == 0 {
		o.Queues = []string{"main", QueueSandbox}
	}
	if o.MaxConcurrentActivities <= 0 {
		o.MaxConcurrentActivities = 8
	}
	if o.SandboxConcurrency <= 0 {
		o.SandboxConcurrency = 1
	}
	if o.Benchmarks == nil {
		o.Benchmarks = registry.Default()
	}
	if v := os.Getenv("BENCHLINE_WEB_OFFLINE"); v == "1" || v == "true" {
		o.Web.Offline = true // cited sources are recorded "unverifiable (offline)" without trying
	}
	web, err := webfetch.New(store, o.Web)
	if err != nil {
		return nil, fmt.Errorf("web fetcher: %w", err)
	}
	var obs activities.Observer
	if o.Metrics != nil {
		obs = o.Metrics
	}
	var out []worker.Worker
	for _, q := range o.Queues {
		switch q {
		case "main":
			w := worker.New(c, cfg.Temporal.TaskQueue, worker.Options{MaxConcurrentActivityExecutionSize: o.MaxConcurrentActivities, MaxHeartbeatThrottleInterval: HeartbeatThrottle})
			w.RegisterWorkflow(workflows.BuildDataset)
			w.RegisterWorkflow(workflows.EvaluateModel)
			w.RegisterWorkflow(workflows.RefreshLeaderboard)
			w.RegisterActivity(&activities.Datasets{Store: store, Benchmarks: o.Benchmarks, OpenS3: S3Opener(cfg), Gateway: gw, CacheTTL: cfg.Models.CacheTTL})
			w.RegisterWorkflow(workflows.PublishDataset)
			w.RegisterActivity(&activities.Publish{Store: store, Benchmarks: o.Benchmarks, OpenS3: S3Opener(cfg), Descriptions: o.Benchmarks.Descriptions()})
			w.RegisterActivity(&activities.Eval{Store: store, Gateway: gw, Benchmarks: o.Benchmarks.WithDeps(benchmark.Deps{Store: store, Web: web}), SampleConcurrency: o.SampleConcurrency, CheckpointInterval: o.CheckpointInterval, CacheTTL: cfg.Models.CacheTTL, Observer: obs, Logger: o.Logger})
			w.RegisterActivity(&activities.Leaderboard{Store: store, Benchmarks: o.Benchmarks, Client: c})
			out = append(out, w)
		case QueueSandbox:
			sb, err := sandbox.New(sandbox.Config{})
			if err != nil {
				return nil, fmt.Errorf("sandbox queue: %w", err)
			}
			// Fail at start, naming the cause, where bubblewrap cannot sandbox
			// (a container without docs/DEPLOY.md's options), not on every sample.
			if err := sb.Check(context.Background()); err != nil {
				sb.Close()
				return nil, fmt.Errorf("sandbox queue: %w", err)
			}
			var sbx lang.Sandboxer = sb
			if o.Metrics != nil {
				sbx = observedSandbox{Sandboxer: sb, m: o.Metrics}
			}
			w := worker.New(c, QueueSandbox, worker.Options{MaxConcurrentActivityExecutionSize: o.SandboxConcurrency, MaxHeartbeatThrottleInterval: HeartbeatThrottle})
			w.RegisterActivity(&activities.Eval{Store: store, Gateway: gw, Benchmarks: o.Benchmarks.WithDeps(benchmark.Deps{Sandbox: sbx, Store: store}), CheckpointInterval: o.CheckpointInterval, Observer: obs, Logger: o.Logger})
			out = append(out, closingWorker{Worker: w, close: sb.Close})
		default:
			return nil, fmt.Errorf("unknown queue %q (main, sandbox)", q)
		}
	}
	return out, nil
}

// observedSandbox counts every sandboxed step in metrics.
type observedSandbox struct {
	lang.Sandboxer
	m *metrics.Metrics
}

func (s observedSandbox) Run(ctx context.Context, c sandbox.Cmd) (sandbox.Result, error) {
	t0 := time.Now()
	res, err := s.Sandboxer.Run(ctx, c)
	s.m.SandboxRun(c.Lang, c.Step, string(res.Status), time.Since(t0))
	return res, err
}

// closingWorker releases what its activities used (the sandbox's copy of
// /etc) once the worker has stopped.
type closingWorker struct {
	worker.Worker
	close func() error
}

func (w closingWorker) Stop() {
	w.Worker.Stop()
	_ = w.close()
}
