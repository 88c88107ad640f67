package main

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchline/benchline/internal/app"
	"github.com/benchline/benchline/internal/baseline"
	"github.com/benchline/benchline/internal/source"
)

// newServeBaselinesCmd is `benchline serve-baselines`: the deterministic
// baseline models over the OpenAI chat-completions API.
func newServeBaselinesCmd(g *globals) *cobra.Command {
	var (
		addr, refsPath, faults string
		batch                  string
		refsStore              bool
		seed                   uint64
		maxContext             int
	)
	cmd := &cobra.Command{
		Use:   "serve-baselines",
		Short: "Serve the deterministic baseline models over the OpenAI chat-completions API",
		Long: `serve-baselines serves GET /v1/models and POST /v1/chat/completions with the baseline
models benchline uses in the demo and the tests: reference (answers from the references
file), noisy-<p> (corrupts a share p of answers), first and second (judges that always
prefer that answer) and echo; and POST /pooling (vLLM's pooling API) with the scalar
reward models reward-reference (agreement of a reply's tool calls with the reference),
reward-noisy-<p> and reward-length. Point the gateway's "baseline" provider at
http://<addr>/v1 (BENCHLINE_BASELINE_URL) and use models named baseline/<id>.

--faults injects infrastructure failures, e.g.
  --faults rate_limit=0.2,retry_after=1s,server_error=0.05,timeout=0.02,drop=0.01,latency=200ms
and a request may override them with the X-Benchline-Faults header.

The OpenAI files and batches endpoints (POST /v1/files, POST /v1/batches, GET
/v1/batches/{id}, POST /v1/batches/{id}/cancel, GET /v1/files/{id}/content) answer each
batch after --batch delay=..., with injectable failures, e.g.
  --batch delay=30s,expire=0.1,never=0.05,fail_lines=0.02`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := baseline.ParseFaults(faults)
			if err != nil {
				return err
			}
			bo, err := baseline.ParseBatchOptions(batch)
			if err != nil {
				return err
			}
			opts := baseline.Options{Faults: f, Batch: bo, Seed: seed, MaxContextTokens: maxContext,
				Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))}
			if refsPath != "" && refsStore {
				return fmt.Errorf("serve-baselines: --references and --references-store: give one")
			}
			if refsStore {
				_, store, err := g.store(cmd.Context())
				if err != nil {
					return fmt.Errorf("serve-baselines: --references-store: %w", err)
				}
				opts.References = &app.StoreReferences{Store: store, Logger: opts.Logger}
				fmt.Fprintln(cmd.ErrOrStderr(), "serve-baselines: references from the configured object store's references/, read as runs write them")
			}
			if refsPath != "" {
				var open source.S3Opener
				if strings.HasPrefix(refsPath, "s3://") {
					cfg, err := g.load()
					if err != nil {
						return err
					}
					open = app.S3Opener(cfg)
				}
				refs, err := app.LoadReferences(cmd.Context(), open, refsPath)
				if err != nil {
					return fmt.Errorf("serve-baselines: %w", err)
				}
				opts.References = refs
				fmt.Fprintf(cmd.ErrOrStderr(), "serve-baselines: %d references from %s\n", refs.Len(), refsPath)
			}
			srv, err := baseline.New(opts)
			if err != nil {
				return err
			}
			return srv.ListenAndServe(cmd.Context(), addr, func(a net.Addr) {
				fmt.Fprintf(cmd.OutOrStdout(), "baseline models on http://%s/v1 (faults: %q) at %s\n",
					a, f.String(), time.Now().Format(time.RFC3339))
			})
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8400", "listen address host:port")
	cmd.Flags().BoolVar(&refsStore, "references-store", false, "reference answers from the configured object store (references/<dataset>/<version>/task-N.jsonl), read as the engine writes them, as the dev stack does: what a deployed baseline server next to workers wants")
	cmd.Flags().StringVar(&refsPath, "references", "", "reference answers: a .jsonl file, a directory of them, or an s3:// file or prefix (the engine's references/<dataset>/<version>/task-N.jsonl, or hand-written; see docs/gateway.md)")
	cmd.Flags().StringVar(&faults, "faults", "", "injected faults, e.g. rate_limit=0.2,server_error=0.05,timeout=0.02,drop=0.01,latency=200ms,retry_after=1s,seed=1")
	cmd.Flags().StringVar(&batch, "batch", "", "batch endpoints: delay before a batch answers and injected failures, e.g. delay=30s,expire=0.1,never=0.05,fail_lines=0.02")
	cmd.Flags().Uint64Var(&seed, "seed", 0, "seed varying every answer")
	cmd.Flags().IntVar(&maxContext, "max-context-tokens", 131072, "prompts longer than this fail with context_length_exceeded")
	return cmd
}
