package integration

import (
	"context"
	"encoding/json"
	"maps"
	"reflect"
	"testing"
	"time"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/medrubric"
	"github.com/benchline/benchline/datasets/reporteval"
	"github.com/benchline/benchline/internal/app"
	"github.com/benchline/benchline/internal/baseline"
	"github.com/benchline/benchline/internal/gateway"
	"github.com/benchline/benchline/internal/judge"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/internal/webfetch"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/workflows"
)

// TestBatchJudgedRounds evaluates the judged benchmarks in batch mode on
// the real stack (Temporal, MinIO, a worker whose gateway sends batches to
// a baseline server over HTTP, the fixtures' cited pages served to its
// fetcher) with one judge and with a panel of three, and counts the batches
// the server created: each run has one shard with one provider, so one
// batch per round. The rounds do not grow with the panel or the number of
// questions — medrubric's two-turn sessions take three rounds (each
// turn's answer, its judges with the next turn's answer), reporteval two
// (the report, then its quality, every pair and every fact check) — and
// every row (scores, verdicts, replies, judge errors) equals an interactive
// run's. (Asking one question after another took 4 and 8 rounds for
// medrubric, 18 and 50 for reporteval.)
func TestBatchJudgedRounds(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	srv, url := serveBaseline(ctx, t, baseline.Options{References: &app.StoreReferences{Store: stack.Store},
		Batch: baseline.BatchOptions{Delay: 100 * time.Millisecond}})
	// No process-wide answer cache: each run's answers come from its own
	// cache segment, so its rounds and calls are its own, not the earlier
	// runs' hits.
	gw, err := gateway.New(gateway.Options{Cache: noLRU{}, Config: &gateway.Config{Providers: map[string]*gateway.Provider{
		gateway.BaselineProvider: {BaseURL: url, Batch: &gateway.BatchConfig{Enabled: true, PollInterval: 100 * time.Millisecond}}}}})
	if err != nil {
		t.Fatal(err)
	}
	const queue = "batch-judged"
	cfg := stack.Stack.Config
	cfg.Temporal.TaskQueue = queue
	web := webfetch.Config{Resolve: map[string]string{}, AllowHosts: stack.Hosts}
	for _, h := range stack.Hosts {
		web.Resolve[h] = stack.Sources
	}
	ws, err := app.NewWorkers(stack.Client, cfg, stack.Store, gw, app.WorkerOptions{Queues: []string{"main"}, Web: web})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Stop)
	}

	for _, tc := range []struct {
		dataset string
		build   datasets.Request
		rounds  int64
	}{
		{medrubric.Name, datasets.Request{Source: medrubric.Embedded}, 3},
		{reporteval.Name, datasets.Request{Source: reporteval.Embedded,
			Params: map[string]string{reporteval.ParamReports: reporteval.ReportsReference}}, 2},
	} {
		t.Run(tc.dataset, func(t *testing.T) {
			built, err := buildVia(t, tc.dataset, tc.build)
			if err != nil {
				t.Fatal(err)
			}
			ds := tc.dataset + "@" + built.Version
			for _, panel := range []string{"baseline/judge", "baseline/judge,baseline/judge-noisy-0.3,baseline/judge-yes"} {
				judges := map[string]string{judge.RoleJudge: panel}
				before := srv.BatchStats()
				// One shard (the fixtures are fewer rows): one batch per round.
				// (The runs' first rounds ask the same model requests, so the
				// server sees their content key twice: two runs, each paying.)
				b, err := evalVia(t, queue, workflows.EvaluateModelInput{Request: runs.Request{Dataset: ds, Model: "baseline/reference",
					Judges: judges, ShardSize: 1000, Batch: true}})
				if err != nil {
					t.Fatal(err)
				}
				st := srv.BatchStats()
				rounds := st.Created - before.Created
				if rounds != tc.rounds || !b.Summary.Batch {
					t.Errorf("judges %s: %d rounds (batches), want %d; stats %+v", panel, rounds, tc.rounds, st)
				}
				if b.Summary.Scored != built.Rows || b.Summary.InfraFailed != 0 {
					t.Fatalf("judges %s: scored %d of %d, infrastructure failures %d", panel, b.Summary.Scored, built.Rows, b.Summary.InfraFailed)
				}
				// The same plan interactively (another shard size: another run).
				i, err := evalVia(t, queue, workflows.EvaluateModelInput{Request: runs.Request{Dataset: ds, Model: "baseline/reference",
					Judges: judges, ShardSize: 999}})
				if err != nil {
					t.Fatal(err)
				}
				if srv.BatchStats().Created != st.Created {
					t.Error("the interactive run created batches")
				}
				_, brows := resultRows(ctx, t, b.RunID)
				_, irows := resultRows(ctx, t, i.RunID)
				sameRows(t, brows, irows)
				t.Logf("%s judged by %s: %d samples in %d batch rounds, %d batch lines", tc.dataset, panel, built.Rows, rounds, st.Lines-before.Lines)
			}
		})
	}
}

// noLRU is a gateway.Cache that holds nothing.
type noLRU struct{}

func (noLRU) Get(context.Context, string) (gateway.Entry, bool) { return gateway.Entry{}, false }
func (noLRU) Put(context.Context, gateway.Entry)                {}

// sameRows checks that a batch run's rows equal an interactive run's:
// replies, metrics, errors, calls, tokens and details (every verdict, its
// prompt version and reply), except where the cited sources were fetched
// (their time and whether the fetch cache answered).
func sameRows(t *testing.T, batch, inter []schemas.ResultRow) {
	t.Helper()
	if len(batch) != len(inter) {
		t.Fatalf("%d batch rows, %d interactive", len(batch), len(inter))
	}
	for n, b := range batch {
		i := inter[n]
		if b.SampleID != i.SampleID || b.Response != i.Response || !maps.Equal(b.Metrics, i.Metrics) || b.ErrorClass != i.ErrorClass ||
			b.Calls != i.Calls || b.PromptTokens != i.PromptTokens || b.CompletionTokens != i.CompletionTokens {
			t.Fatalf("sample %s: batch row %+v\ninteractive %+v", b.SampleID, b, i)
		}
		var bd, id map[string]any
		if err := json.Unmarshal([]byte(b.DetailsJSON), &bd); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(i.DetailsJSON), &id); err != nil {
			t.Fatal(err)
		}
		delete(bd, "sources")
		delete(id, "sources")
		if !reflect.DeepEqual(bd, id) {
			t.Fatalf("sample %s: batch details %s\ninteractive %s", b.SampleID, excerpt(b.DetailsJSON, 2000), excerpt(i.DetailsJSON, 2000))
		}
	}
}
