// Command benchline builds LLM benchmark datasets into Parquet on S3 and
// evaluates models on them, orchestrated by Temporal. Run `benchline --help`.
package main

import (
	"context"
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
	"github.com/benchline/benchline/internal/registry"
)

// globals are the flags every command shares.
type globals struct {
	configPath string
	verbose    bool
}

func (g *globals) load() (config.Config, error) {
	return config.Load(g.configPath, os.LookupEnv)
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

// services connects everything a worker-like command needs: Temporal, the
// object store and the model gateway. Close the client.
func (g *globals) services(ctx context.Context) (config.Config, client.Client, *s3blob.Store, *gateway.Gateway, error) {
	cfg, c, err := g.dial()
	if err != nil {
		return cfg, nil, nil, nil, err
	}
	store, err := app.OpenStore(ctx, cfg)
	if err != nil {
		c.Close()
		return cfg, nil, nil, nil, err
	}
	gw, err := app.OpenGateway(cfg, "", g.logger())
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

func (g *globals) logger() *slog.Logger {
	level := slog.LevelWarn
	if g.verbose {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
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

	root.AddCommand(
		newScoreCmd(registry.Default()),
		newDevCmd(g),
		newDemoCmd(g),
		newWorkerCmd(g),
		newDatasetCmd(g),
		newBenchCmd(g),
		newEvalCmd(g),
		newRunsCmd(g),
		newServeBaselinesCmd(g),
		newSandboxCmd(),
		newLeaderboardCmd(g),
	)
	return root
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := newRootCmd().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "benchline:", err)
		os.Exit(1)
	}
}
