// Command benchline builds LLM benchmark datasets into Parquet on S3 and
// evaluates models on them, orchestrated by Temporal. Run `benchline --help`.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/app"
	"github.com/benchline/benchline/internal/blob/s3blob"
	"github.com/benchline/benchline/internal/config"
	"github.com/benchline/benchline/internal/gateway"
	"github.com/benchline/benchline/internal/limits"
	"github.com/benchline/benchline/internal/logattr"
	"github.com/benchline/benchline/internal/metrics"
	"github.com/benchline/benchline/internal/registry"
)

// globals are the flags every command shares.
type globals struct {
	configPath string
	verbose    bool
	logFormat  string
	logLevel   string
}

// load loads the configuration and makes its limits the process's.
func (g *globals) load() (config.Config, error) {
	cfg, err := config.Load(g.configPath, os.LookupEnv)
	if err == nil {
		limits.Set(cfg.Limits)
	}
	return cfg, err
}

// store loads the configuration and opens the object store.
func (g *globals) store(ctx context.Context) (config.Config, *s3blob.Store, error) {
	cfg, err := g.load()
	if err != nil {
		return cfg, nil, err
	}
	st, err := app.OpenStore(ctx, cfg)
	return cfg, st, err
}

// dial loads the configuration and connects to Temporal; close the client.
func (g *globals) dial() (config.Config, client.Client, error) {
	cfg, err := g.load()
	if err != nil {
		return cfg, nil, err
	}
	c, err := app.Dial(cfg, g.logger())
	return cfg, c, err
}

// storeAndDial loads the configuration, opens the object store and
// connects to Temporal; close the client.
func (g *globals) storeAndDial(ctx context.Context) (config.Config, *s3blob.Store, client.Client, error) {
	cfg, store, err := g.store(ctx)
	if err != nil {
		return cfg, nil, nil, err
	}
	c, err := app.Dial(cfg, g.logger())
	return cfg, store, c, err
}

// services connects everything a worker-like command needs: Temporal, the
// object store and the model gateway. Close the client.
func (g *globals) services(ctx context.Context) (config.Config, client.Client, *s3blob.Store, *gateway.Gateway, error) {
	return g.observedServices(ctx, nil, nil)
}

// observedServices is services with the SDK's metrics reported to mh and
// the gateway's calls counted in m (either may be nil).
func (g *globals) observedServices(ctx context.Context, m *metrics.Metrics, mh client.MetricsHandler) (config.Config, client.Client, *s3blob.Store, *gateway.Gateway, error) {
	cfg, err := g.load()
	if err != nil {
		return cfg, nil, nil, nil, err
	}
	c, err := app.DialWith(cfg, g.logger(), mh)
	if err != nil {
		return cfg, nil, nil, nil, err
	}
	store, err := app.OpenStore(ctx, cfg)
	if err != nil {
		c.Close()
		return cfg, nil, nil, nil, err
	}
	gw, err := app.OpenObservedGateway(cfg, "", g.logger(), m)
	if err != nil {
		c.Close()
		return cfg, nil, nil, nil, err
	}
	return cfg, c, store, gw, nil
}

// requestFromFlags builds a dataset build request: the source (default the
// fixtures embedded for the dataset) and key=value parameters.
func requestFromFlags(dataset, src string, params []string) (datasets.Request, error) {
	req := datasets.Request{Source: src}
	if req.Source == "" {
		req.Source = "embedded://" + dataset
	}
	for _, p := range params {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			return req, fmt.Errorf("--param %q: want key=value", p)
		}
		if req.Params == nil {
			req.Params = map[string]string{}
		}
		req.Params[k] = v
	}
	return req, nil
}

// logger is the process's logger on stderr: text or JSON (--log-format) at
// --log-level (debug with -v), each record carrying the run id, shard and
// sample of the context it was logged with (internal/logattr).
func (g *globals) logger() *slog.Logger {
	level := slog.LevelWarn
	_ = level.UnmarshalText([]byte(g.logLevel)) // checked by checkLogFlags
	if g.verbose {
		level = slog.LevelDebug
	}
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler = slog.NewTextHandler(os.Stderr, opts)
	if g.logFormat == "json" {
		h = slog.NewJSONHandler(os.Stderr, opts)
	}
	return slog.New(logattr.Handler(h))
}

// checkLogFlags checks --log-format and --log-level.
func (g *globals) checkLogFlags() error {
	var errs []error
	if g.logFormat != "text" && g.logFormat != "json" {
		errs = append(errs, fmt.Errorf("--log-format %q: want text or json", g.logFormat))
	}
	var l slog.Level
	if err := l.UnmarshalText([]byte(g.logLevel)); err != nil {
		errs = append(errs, fmt.Errorf("--log-level %q: want debug, info, warn or error", g.logLevel))
	}
	return errors.Join(errs...)
}

func newRootCmd() *cobra.Command {
	g := &globals{}
	root := &cobra.Command{
		Use:   "benchline",
		Short: "Build LLM benchmark datasets into Parquet on S3 and evaluate models on them, on Temporal",
		Long: `benchline builds benchmark datasets into versioned Parquet on S3 and evaluates models on
them, orchestrated by Temporal workflows.

With no configuration it talks to the embedded dev stack that 'benchline dev' runs on
loopback. Configure a real deployment with --config FILE (or BENCHLINE_CONFIG) and the
standard variables: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY,
BENCHLINE_S3_ENDPOINT, BENCHLINE_S3_BUCKET, BENCHLINE_S3_PREFIX, AWS_REGION and the AWS
credential chain.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVar(&g.configPath, "config", "", "YAML configuration file (default $BENCHLINE_CONFIG)")
	root.PersistentFlags().BoolVarP(&g.verbose, "verbose", "v", false, "log debug output to stderr")
	root.PersistentFlags().StringVar(&g.logFormat, "log-format", "text", "log records on stderr as text or json (one object a line, with run_id, shard and sample where the engine logs)")
	root.PersistentFlags().StringVar(&g.logLevel, "log-level", "warn", "least level logged: debug, info, warn or error (-v: debug)")
	root.PersistentPreRunE = func(*cobra.Command, []string) error { return g.checkLogFlags() }

	root.AddCommand(
		newScoreCmd(registry.Default()),
		newDevCmd(g),
		newDemoCmd(g),
		newWorkerCmd(g),
		newDatasetCmd(g),
		newEvalCmd(g),
		newLeaderboardCmd(g),
		newRunsCmd(g),
		newServeBaselinesCmd(g),
		newSandboxCmd(),
		newTaskCmd(g),
		newVersionCmd(),
	)
	for _, c := range toolCommands {
		root.AddCommand(c(g))
	}
	setVersion(root)
	return root
}

// toolCommands are added by build-tagged files: `benchline bench` is the
// real command in the tool build (`go build -tags bench`, make
// build-bench; bench.go), which runs go test -bench in a source checkout,
// and in the product binary a stub saying how to get it (bench_stub.go).
var toolCommands []func(*globals) *cobra.Command

// exitError ends the command with its exit code (documented in the
// command's --help), after printing err when not nil.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newRootCmd().ExecuteContext(ctx)
	stop()
	if err == nil {
		return
	}
	code := 1
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
		err = ee.err
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchline:", err)
	}
	os.Exit(code)
}
