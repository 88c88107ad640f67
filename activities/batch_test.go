package activities

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"go.temporal.io/sdk/temporal"

	"github.com/benchline/benchline/internal/baseline"
	"github.com/benchline/benchline/internal/benchmark/benchmarktest"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/gateway"
	"github.com/benchline/benchline/internal/modelapi"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/scorers"
)

// dialogueTask talks two turns with the model under test, then asks a
// judge (baseline/first, which always prefers answer 1) about the
// dialogue: three rounds in batch mode.
type dialogueTask struct{ fakeTask }

// dialogueRuns counts dialogueTask's Evaluate calls (the batch tests do
// not run in parallel).
var dialogueRuns atomic.Int64

func (t *dialogueTask) Evaluate(ctx context.Context, env scorers.Env, s scorers.Sample) (scorers.Outcome, error) {
	dialogueRuns.Add(1)
	var out scorers.Outcome
	msgs := []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "hello from " + s.ID}}
	var transcript []string
	for turn := range 2 {
		resp, err := env.Models.Complete(ctx, env.Request(msgs, nil))
		if err != nil {
			return out, err
		}
		out.Usage.Add(resp.Usage)
		reply := resp.Choices[0].Content
		transcript = append(transcript, reply)
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: reply},
			openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: fmt.Sprintf("turn %d of %s", turn+1, s.ID)})
	}
	verdict, err := env.Models.Complete(ctx, modelapi.Request{Model: "baseline/first", Messages: []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleUser, Content: "Which is better?\n" + strings.Join(transcript, "\n")}}})
	if err != nil {
		return out, err
	}
	out.Usage.Add(verdict.Usage)
	out.Response = strings.Join(transcript, " | ") + " || " + verdict.Choices[0].Content
	out.Metrics = map[string]float64{"m": 0}
	if strings.Contains(verdict.Choices[0].Content, "1") {
		out.Metrics["m"] = 1
	}
	return out, nil
}

// batchShardRun runs shard 0 of a fresh one-shard run of n dialogue
// samples, in batch mode or not, against srv, and returns its rows.
func batchShardRun(t *testing.T, url string, batch bool, n int64, cfg gateway.BatchConfig) ([]schemas.ResultRow, ShardResult, *Eval, string) {
	return batchShardRunKilled(t, url, batch, n, cfg, nil)
}

// batchShardRunKilled is batchShardRun whose first attempt, when kill is
// set, is killed kill(records) after its first batch is recorded (a
// negative kill(records) waits for more records).
func batchShardRunKilled(t *testing.T, url string, batch bool, n int64, cfg gateway.BatchConfig, kill func([]blob.Info) time.Duration) ([]schemas.ResultRow, ShardResult, *Eval, string) {
	t.Helper()
	ctx := context.Background()
	task := &dialogueTask{}
	a, run := generatedShard(t, &task.fakeTask, n, 4)
	if err := a.Store.Delete(ctx, runs.ShardKey(run, 0)); err != nil {
		t.Fatal(err)
	}
	a.Benchmarks = benchmarktest.Registry(t, benchmarktest.Task(task, schemas.Table{Name: "item", Version: 1}))
	var plan runs.Plan
	if err := blob.GetJSON(ctx, a.Store, runs.PlanKey(run), &plan); err != nil {
		t.Fatal(err)
	}
	plan.Batch = batch
	if err := blob.PutJSON(ctx, a.Store, runs.PlanKey(run), plan); err != nil {
		t.Fatal(err)
	}
	c := cfg
	gw, err := gateway.New(gateway.Options{Config: &gateway.Config{Providers: map[string]*gateway.Provider{
		gateway.BaselineProvider: {BaseURL: url, Prices: gateway.Prices{InputPerMTok: 1, OutputPerMTok: 4}, Batch: &c}}}})
	if err != nil {
		t.Fatal(err)
	}
	a.Gateway, a.SampleConcurrency, a.retryBase = gw, 4, time.Millisecond
	if kill != nil {
		// The first attempt dies once its first batch is recorded; the
		// second resumes.
		kctx, cancel := context.WithCancel(ctx)
		go func() {
			for kctx.Err() == nil {
				if infos, _ := a.Store.List(ctx, runs.BatchPrefix(run, 0)); len(infos) >= 2 {
					if d := kill(infos); d >= 0 {
						time.Sleep(d)
						cancel()
						return
					}
				}
				time.Sleep(time.Millisecond)
			}
		}()
		env, _ := activityEnv(kctx, a)
		_, err := env.ExecuteActivity(a.RunShard, RunShardInput{RunID: run, Shard: 0})
		cancel()
		if err == nil {
			t.Fatal("the killed attempt succeeded")
		}
	}
	env, _ := activityEnv(ctx, a)
	v, err := env.ExecuteActivity(a.RunShard, RunShardInput{RunID: run, Shard: 0})
	if err != nil {
		t.Fatal(err)
	}
	var res ShardResult
	if err := v.Get(&res); err != nil {
		t.Fatal(err)
	}
	rows, err := pq.ReadAll[schemas.ResultRow](ctx, a.Store, runs.ShardKey(run, 0))
	if err != nil {
		t.Fatal(err)
	}
	return rows, res, a, run
}

func serveBatches(t *testing.T, opts baseline.BatchOptions) (*baseline.Server, string) {
	t.Helper()
	return serveBatchesFailing(t, opts, func(http.ResponseWriter, *http.Request) bool { return false })
}

// serveBatchesFailing is serveBatches with fail in front of the server: a
// request fail answers (it returns true) does not reach the server (an
// injected failure).
func serveBatchesFailing(t *testing.T, opts baseline.BatchOptions, fail func(http.ResponseWriter, *http.Request) bool) (*baseline.Server, string) {
	t.Helper()
	srv, err := baseline.New(baseline.Options{Batch: opts})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !fail(w, r) {
			srv.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(hs.Close)
	return srv, hs.URL + "/v1"
}

var fastBatches = gateway.BatchConfig{Enabled: true, PollInterval: 5 * time.Millisecond}

// TestBatchShardSameRowsAsInteractive runs a dialogue task with a judge
// in batch mode and interactively: the same rows (replies, verdicts,
// metrics, calls and tokens; the batches' answers count as paid calls,
// not cache hits) from three rounds of batches, each created once, at
// half the interactive cost.
func TestBatchShardSameRowsAsInteractive(t *testing.T) {
	srv, url := serveBatches(t, baseline.BatchOptions{Delay: 10 * time.Millisecond})
	interactive, ires, _, _ := batchShardRun(t, url, false, 10, fastBatches)
	if st := srv.BatchStats(); st.Created != 0 {
		t.Fatalf("the interactive run created %d batches", st.Created)
	}
	calls := srv.Stats().Requests
	dialogueRuns.Store(0)
	batched, bres, _, _ := batchShardRun(t, url, true, 10, fastBatches)
	// Each sample's task runs once a round: three rounds that defer (two
	// turns, the judge) and one that runs through on cached answers,
	// whose rows are the shard's (no pass after the rounds).
	if got := dialogueRuns.Load(); got != 40 {
		t.Fatalf("the batch shard ran the task %d times, want 40 (4 rounds of 10 samples)", got)
	}
	st := srv.BatchStats()
	if st.Created != 3 || st.MaxPerKey != 1 || st.Lines != 30 {
		t.Fatalf("batch stats %+v, want 3 batches (two turns, a judge) of 10 lines, none created twice", st)
	}
	if got := srv.Stats().Requests - calls; got != 30 {
		t.Fatalf("the batch run reached the chat handler %d times, want its 30 batch lines only", got)
	}
	if len(batched) != len(interactive) {
		t.Fatalf("%d rows, want %d", len(batched), len(interactive))
	}
	for i := range batched {
		b, in := batched[i], interactive[i]
		if b.Response != in.Response || b.Metrics["m"] != in.Metrics["m"] || b.ErrorClass != "" || b.SampleID != in.SampleID ||
			b.Calls != in.Calls || b.CacheHits != 0 || b.PromptTokens != in.PromptTokens || b.CompletionTokens != in.CompletionTokens {
			t.Fatalf("row %d: batch %+v, interactive %+v", i, b, in)
		}
	}
	if bres.CostUSD <= 0 || fmt.Sprintf("%.9f", bres.CostUSD*2) != fmt.Sprintf("%.9f", ires.CostUSD) {
		t.Fatalf("batch cost %v, interactive %v: want half", bres.CostUSD, ires.CostUSD)
	}
}

// TestBatchShardFailures: failed lines (retried once in a new batch, then
// infrastructure errors, or called with fallback), and a batch that never
// completes (cancelled at its bound, its requests infrastructure errors).
func TestBatchShardFailures(t *testing.T) {
	t.Run("failed lines", func(t *testing.T) {
		srv, url := serveBatches(t, baseline.BatchOptions{FailLines: 1})
		rows, res, a, run := batchShardRun(t, url, true, 6, fastBatches)
		if res.InfraFailed != 6 {
			t.Fatalf("%+v: want 6 infrastructure failures", res)
		}
		// What `runs show` says of the batches: two completed (the batch
		// and its retry), 6 requests failed with a 500, and why.
		rep, err := ReadBatchReport(context.Background(), a.Store, run)
		if err != nil {
			t.Fatal(err)
		}
		if rep == nil || rep.Batches != 2 || rep.Status["completed"] != 2 || rep.Requests != 12 || rep.Failed != 6 || rep.Fallback != 0 ||
			len(rep.Reasons) != 1 || rep.Reasons[0].Requests != 6 || rep.Reasons[0].Status != 500 ||
			!strings.Contains(rep.Reasons[0].Example, "injected failed line") {
			t.Fatalf("batch report %+v", rep)
		}
		for _, r := range rows {
			if r.ErrorClass != schemas.ErrorClassInfrastructure || !strings.Contains(r.ErrorMessage, "injected failed line") || len(r.Metrics) != 0 {
				t.Fatalf("row %+v: want an unscored infrastructure error naming the failed line", r)
			}
		}
		if st := srv.BatchStats(); st.Created != 2 || st.MaxPerKey != 1 {
			t.Fatalf("batch stats %+v: want the batch and one retry batch", st)
		}
	})
	t.Run("failed lines fall back to calls", func(t *testing.T) {
		_, url := serveBatches(t, baseline.BatchOptions{FailLines: 1})
		cfg := fastBatches
		cfg.Fallback = gateway.FallbackInteractive
		_, res, a, run := batchShardRun(t, url, true, 6, cfg)
		if res.InfraFailed != 0 || res.Samples != 6 {
			t.Fatalf("%+v: want every sample answered by calls", res)
		}
		if rep, err := ReadBatchReport(context.Background(), a.Store, run); err != nil || rep.Failed != 0 || rep.Fallback != 18 || rep.Batches != 6 {
			t.Fatalf("batch report %+v (%v): want each round's 6 requests called after two batches", rep, err)
		}
	})
	t.Run("expired", func(t *testing.T) {
		_, url := serveBatches(t, baseline.BatchOptions{Expire: 1})
		rows, res, _, _ := batchShardRun(t, url, true, 4, fastBatches)
		if res.InfraFailed != 4 || !strings.Contains(rows[0].ErrorMessage, "batch_expired") {
			t.Fatalf("%+v %q: want 4 expired infrastructure failures", res, rows[0].ErrorMessage)
		}
	})
	t.Run("never completes", func(t *testing.T) {
		srv, url := serveBatches(t, baseline.BatchOptions{Never: 1})
		cfg := fastBatches
		cfg.CompletionWindow, cfg.Margin = "100ms", 50*time.Millisecond
		start := time.Now()
		rows, res, _, _ := batchShardRun(t, url, true, 4, cfg)
		if res.InfraFailed != 4 || !strings.Contains(rows[0].ErrorMessage, "did not complete within") {
			t.Fatalf("%+v %q: want 4 infrastructure failures past the bound", res, rows[0].ErrorMessage)
		}
		if st := srv.BatchStats(); st.Created != 1 || st.Cancelled != 1 {
			t.Fatalf("batch stats %+v: want one batch, cancelled at its bound and not retried", st)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Fatalf("took %s", d)
		}
	})
}

// TestBatchResumeAndCancel: a record written before the batch was created
// (the worker died in between) is resolved through the provider's list,
// not by a second batch; CleanupRun cancels a run's unfinished batches.
func TestBatchResumeAndCancel(t *testing.T) {
	srv, url := serveBatches(t, baseline.BatchOptions{Never: 1})
	ctx := context.Background()
	_, _, a, run := batchShardRun(t, url, false, 2, fastBatches)
	if rep, err := ReadBatchReport(ctx, a.Store, run); rep != nil || err != nil {
		t.Fatalf("an interactive run's batch report %+v (%v): want none", rep, err)
	}
	b := &batchShard{a: a, run: run, shard: 0}
	reqs := []gateway.BatchRequest{{Key: "k1", Provider: gateway.BaselineProvider, Model: "baseline/echo",
		Body: &openai.ChatCompletionRequest{Model: "echo", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}}}}}
	files, err := gateway.EncodeBatch(reqs, 10, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	key := gateway.BatchContentKey(files[0]) + "-0"
	first, err := a.Gateway.CreateBatch(ctx, gateway.BaselineProvider, key, files[0])
	if err != nil {
		t.Fatal(err)
	}
	// The record as a killed worker left it: no id.
	if err := blob.PutJSON(ctx, a.Store, runs.BatchKey(run, 0, key), batchRecord{Provider: gateway.BaselineProvider, Key: key, Created: time.Now()}); err != nil {
		t.Fatal(err)
	}
	manifest, err := gateway.BatchManifest(reqs)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := b.submit(ctx, gateway.BaselineProvider, key, files[0], manifest, 1)
	if err != nil {
		t.Fatal(err)
	}
	if rec.ID != first.ID || srv.BatchStats().Created != 1 {
		t.Fatalf("resumed %q (first %q), %d batches created: want the first, once", rec.ID, first.ID, srv.BatchStats().Created)
	}
	var got batchRecord
	if err := blob.GetJSON(ctx, a.Store, runs.BatchKey(run, 0, key), &got); err != nil || got.ID != first.ID {
		t.Fatalf("record %+v (%v): want the id recorded", got, err)
	}
	res, err := a.CleanupRun(ctx, CleanupRunInput{RunID: run})
	if err != nil || res.Batches != 1 || srv.BatchStats().Cancelled != 1 {
		t.Fatalf("cleanup %+v (%v), %d cancelled: want the waiting batch cancelled", res, err, srv.BatchStats().Cancelled)
	}
}

// TestBatchShardKilledResumes kills a batch shard while its first batch is
// in progress: the retry polls the same batch (none created twice) and the
// rows equal an uninterrupted run's.
func TestBatchShardKilledResumes(t *testing.T) {
	_, url := serveBatches(t, baseline.BatchOptions{Delay: 10 * time.Millisecond})
	want, _, _, _ := batchShardRun(t, url, true, 8, fastBatches)
	// Long enough that the kill, 50 ms after the first record, lands while
	// the first batch is in progress, also on a loaded machine.
	srv, url := serveBatches(t, baseline.BatchOptions{Delay: time.Second})
	got, _, _, _ := batchShardRunKilled(t, url, true, 8, fastBatches, func([]blob.Info) time.Duration { return 50 * time.Millisecond })
	if st := srv.BatchStats(); st.Created != 3 || st.MaxPerKey != 1 {
		t.Fatalf("the killed run created %d batches (most for one key %d): want 3, none twice", st.Created, st.MaxPerKey)
	}
	for i := range want {
		if got[i].Response != want[i].Response || got[i].Metrics["m"] != want[i].Metrics["m"] {
			t.Fatalf("row %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	// Killed in the second round: the retry reads the first round's
	// requests from its stored file (the batch is done), resumes the
	// second's, and still counts every answer as a paid call.
	srv, url = serveBatches(t, baseline.BatchOptions{Delay: time.Second})
	got, _, _, _ = batchShardRunKilled(t, url, true, 8, fastBatches, func(infos []blob.Info) time.Duration {
		if len(infos) < 4 { // the first round's file and record, then the second's
			return -1
		}
		return 50 * time.Millisecond
	})
	if st := srv.BatchStats(); st.Created != 3 || st.MaxPerKey != 1 {
		t.Fatalf("the run killed in round 2 created %d batches (most for one key %d): want 3, none twice", st.Created, st.MaxPerKey)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Response != w.Response || g.Calls != w.Calls || g.CacheHits != 0 || g.PromptTokens != w.PromptTokens {
			t.Fatalf("row %d: %+v, want %+v", i, g, w)
		}
	}
}

// TestBatchShardLostBatch: a recorded batch the provider no longer knows
// (a 404: deleted, or the provider restarted without its state) fails its
// requests unanswered, as an expired batch's do: they are retried in a new
// batch (retries: 1 by default) and the shard ends with every sample
// answered, where it used to fail for good, and every later attempt of the
// run with it, on the same record.
func TestBatchShardLostBatch(t *testing.T) {
	_, url := serveBatches(t, baseline.BatchOptions{Delay: 10 * time.Millisecond})
	want, _, _, _ := batchShardRun(t, url, true, 8, fastBatches)
	first, err := baseline.New(baseline.Options{Batch: baseline.BatchOptions{Delay: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	restarted, err := baseline.New(baseline.Options{Batch: baseline.BatchOptions{Delay: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	var cur atomic.Pointer[baseline.Server]
	cur.Store(first)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { cur.Load().ServeHTTP(w, r) }))
	t.Cleanup(hs.Close)
	got, _, _, _ := batchShardRunKilled(t, hs.URL+"/v1", true, 8, fastBatches, func([]blob.Info) time.Duration {
		for first.BatchStats().Created == 0 { // once the first batch exists,
			time.Sleep(time.Millisecond)
		}
		cur.Store(restarted) // the provider restarts without its batches
		return 50 * time.Millisecond
	})
	if first.BatchStats().Created == 0 || restarted.BatchStats().Created == 0 {
		t.Fatalf("batches created before the restart %d, after %d: want both", first.BatchStats().Created, restarted.BatchStats().Created)
	}
	for i := range want {
		if got[i].ErrorClass != "" || got[i].Response != want[i].Response || got[i].Metrics["m"] != want[i].Metrics["m"] {
			t.Fatalf("row %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestBatchShardLostResultFile: a completed batch whose output file the
// provider no longer has (a 404 on its download: deleted, or dropped by a
// provider that bounds what it keeps) is a batch that ended unanswered, as
// a lost one is: its requests go into a new batch and the shard ends with
// every sample answered, instead of failing on the same record at every
// attempt.
func TestBatchShardLostResultFile(t *testing.T) {
	_, url := serveBatches(t, baseline.BatchOptions{Delay: 10 * time.Millisecond})
	want, _, _, _ := batchShardRun(t, url, true, 8, fastBatches)
	var dropped atomic.Int64
	_, url = serveBatchesFailing(t, baseline.BatchOptions{Delay: 10 * time.Millisecond}, func(w http.ResponseWriter, r *http.Request) bool {
		if strings.HasSuffix(r.URL.Path, "/content") && dropped.Add(1) == 1 {
			http.Error(w, `{"error":{"message":"No such File object","type":"invalid_request_error"}}`, http.StatusNotFound)
			return true
		}
		return false
	})
	got, _, _, _ := batchShardRun(t, url, true, 8, fastBatches)
	if dropped.Load() < 2 {
		t.Fatalf("%d downloads, want the dropped one and more", dropped.Load())
	}
	for i := range want {
		if got[i].ErrorClass != "" || got[i].Response != want[i].Response || got[i].Metrics["m"] != want[i].Metrics["m"] {
			t.Fatalf("row %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestBatchShardRecordWithoutBatch: an attempt that recorded a batch and
// then failed to create it (here the provider refuses the first create;
// a worker killed in between leaves the same) is retried: the retry does
// not create the batch from the stored manifest (it has no file), its
// round builds the same requests again, finds the record, and creates the
// batch then, once. The rows equal an uninterrupted run's.
func TestBatchShardRecordWithoutBatch(t *testing.T) {
	_, url := serveBatches(t, baseline.BatchOptions{Delay: 10 * time.Millisecond})
	want, _, _, _ := batchShardRun(t, url, true, 8, fastBatches)
	var refused atomic.Int64
	srv, url := serveBatchesFailing(t, baseline.BatchOptions{Delay: 10 * time.Millisecond}, func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/batches") && refused.Add(1) == 1 {
			http.Error(w, `{"error":{"message":"injected: create refused","type":"invalid_request_error"}}`, http.StatusBadRequest)
			return true
		}
		return false
	})
	got, _, a, run := batchShardRunKilled(t, url, true, 8, fastBatches, func([]blob.Info) time.Duration { return -1 })
	if st := srv.BatchStats(); st.Created != 3 || st.MaxPerKey != 1 || refused.Load() != 4 {
		t.Fatalf("%d batches created (most for one key %d), %d creates asked: want 3, none twice, after one refused", st.Created, st.MaxPerKey, refused.Load())
	}
	for i := range want {
		if got[i].Response != want[i].Response || got[i].Calls != want[i].Calls || got[i].CacheHits != 0 {
			t.Fatalf("row %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	// What the store keeps of each batch is its manifest: keys and models.
	infos, err := a.Store.List(context.Background(), runs.BatchPrefix(run, 0))
	if err != nil {
		t.Fatal(err)
	}
	manifests := 0
	for _, info := range infos {
		if !strings.HasSuffix(info.Key, ".jsonl") {
			continue
		}
		manifests++
		b, err := blob.GetBytes(context.Background(), a.Store, info.Key)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "messages") || !strings.HasPrefix(string(b), `{"custom_id":"`) {
			t.Fatalf("%s holds %q: want the manifest only", info.Key, b)
		}
	}
	if manifests != 3 {
		t.Fatalf("%d manifests stored: want 3", manifests)
	}
}

// TestBatchShardBrokenManifest: a retry that finds an unfinished batch
// whose stored manifest has a line that does not decode ends at once, not
// retried, naming the object and the line.
func TestBatchShardBrokenManifest(t *testing.T) {
	_, url := serveBatches(t, baseline.BatchOptions{Delay: 10 * time.Millisecond})
	_, _, a, run := batchShardRun(t, url, true, 4, fastBatches)
	ctx := context.Background()
	if err := a.Store.Delete(ctx, runs.ShardKey(run, 0)); err != nil {
		t.Fatal(err)
	}
	key := "feedface-0"
	if err := blob.PutJSON(ctx, a.Store, runs.BatchKey(run, 0, key), batchRecord{Provider: gateway.BaselineProvider, Key: key, ID: "batch-x", Created: time.Now()}); err != nil {
		t.Fatal(err)
	}
	fkey := runs.BatchFileKey(run, 0, key)
	if err := blob.PutBytes(ctx, a.Store, fkey, []byte("{\"custom_id\":\"k1\",\"body\":{\"model\":\"echo\"}}\n{\"custom_id\":\n")); err != nil {
		t.Fatal(err)
	}
	env, _ := activityEnv(ctx, a)
	_, err := env.ExecuteActivity(a.RunShard, RunShardInput{RunID: run, Shard: 0})
	if !isNonRetryable(err) || !strings.Contains(err.Error(), fkey) || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("RunShard = %v: want a non-retryable error naming %s and its line 2", err, fkey)
	}
}

// TestAcquireBuild: a worker builds batch rounds for as many shards at
// once as it has cores (at least 2); the next waits until a slot is given
// back, or gives up when its context ends. Giving a slot back twice gives
// back one.
func TestAcquireBuild(t *testing.T) {
	a := &Eval{}
	slots := max(2, runtime.GOMAXPROCS(0))
	var releases []func()
	for range slots {
		r, err := a.acquireBuild(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		releases = append(releases, r)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := a.acquireBuild(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("slot %d of %d: %v, want to wait until the context ends", slots+1, slots, err)
	}
	got := make(chan error, 1)
	go func() {
		_, err := a.acquireBuild(context.Background())
		got <- err
	}()
	releases[0]()
	releases[0]() // once only
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if n := len(a.build); n != slots {
		t.Fatalf("%d slots taken, want %d (a double release gave one back twice)", n, slots)
	}
}

// measuringServer is a baseline batch server behind a proxy that counts
// the result files' downloads and keeps the smallest one's size.
type measuringServer struct {
	srv       *baseline.Server
	url       string
	downloads atomic.Int64
	smallest  atomic.Int64
}

func serveMeasured(t *testing.T, opts baseline.BatchOptions) *measuringServer {
	t.Helper()
	srv, err := baseline.New(baseline.Options{Batch: opts})
	if err != nil {
		t.Fatal(err)
	}
	m := &measuringServer{srv: srv}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/content") {
			srv.ServeHTTP(w, r)
			return
		}
		m.downloads.Add(1)
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, r)
		if n := int64(rec.Body.Len()); m.smallest.Load() == 0 || n < m.smallest.Load() {
			m.smallest.Store(n)
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	}))
	t.Cleanup(hs.Close)
	m.url = hs.URL + "/v1"
	return m
}

// TestBatchShardResultFileOverLimit: a batch whose output file passes
// max_result_bytes keeps the answers read before the limit, and the
// requests past it fail unanswered, as a lost batch's do: with retries
// they go into new batches and the shard ends in one attempt with every
// sample answered as an uninterrupted run's, each output file downloaded
// once; with none (retries: -1) they are infrastructure errors naming the
// limit, the other samples answered, and every batch record is done, so no
// later attempt downloads a file again. The shard used to fail with a
// retryable error (the batch's non-retryable one joined), downloading the
// whole file at each of its attempts, and so did every later run on the
// same record.
func TestBatchShardResultFileOverLimit(t *testing.T) {
	whole := serveMeasured(t, baseline.BatchOptions{Delay: 10 * time.Millisecond})
	want, _, _, _ := batchShardRun(t, whole.url, true, 8, fastBatches)
	// Half the smallest output file (8 answers): every batch of a round
	// is cut, and a request's line is far below the limit.
	limit := whole.smallest.Load() / 2
	if limit < 500 {
		t.Fatalf("smallest output file %d bytes", whole.smallest.Load())
	}

	t.Run("retried in new batches", func(t *testing.T) {
		m := serveMeasured(t, baseline.BatchOptions{Delay: 10 * time.Millisecond})
		cfg := fastBatches
		// Each try reads at least one line: 8 tries answer 8 requests.
		cfg.MaxResultBytes, cfg.Retries = limit, 8
		got, res, _, _ := batchShardRun(t, m.url, true, 8, cfg)
		if res.InfraFailed != 0 {
			t.Fatalf("%+v: want every sample answered", res)
		}
		for i := range want {
			if got[i].ErrorClass != "" || got[i].Response != want[i].Response || got[i].Metrics["m"] != want[i].Metrics["m"] {
				t.Fatalf("row %d: %+v, want %+v", i, got[i], want[i])
			}
		}
		st := m.srv.BatchStats()
		if st.Created <= 3 || st.MaxPerKey != 1 || m.downloads.Load() != st.Created {
			t.Fatalf("%d batches created (most for one key %d), %d files downloaded: want more than 3 (the requests past the limit in new batches), none twice, each output file once",
				st.Created, st.MaxPerKey, m.downloads.Load())
		}
	})
	t.Run("no retries", func(t *testing.T) {
		m := serveMeasured(t, baseline.BatchOptions{Delay: 10 * time.Millisecond})
		cfg := fastBatches
		cfg.MaxResultBytes, cfg.Retries = limit, -1
		got, res, a, run := batchShardRun(t, m.url, true, 8, cfg)
		if res.InfraFailed == 0 || res.InfraFailed == 8 {
			t.Fatalf("%+v: want the samples past the limit infrastructure errors, the others answered", res)
		}
		for i := range want {
			switch g := got[i]; {
			case g.ErrorClass == "" && (g.Response != want[i].Response || g.Metrics["m"] != want[i].Metrics["m"]):
				t.Fatalf("row %d: %+v, want %+v", i, g, want[i])
			case g.ErrorClass != "" && (g.ErrorClass != schemas.ErrorClassInfrastructure || !strings.Contains(g.ErrorMessage, fmt.Sprintf("exceeds max_result_bytes %d", limit))):
				t.Fatalf("row %d: %+v: want an infrastructure error naming max_result_bytes %d", i, g, limit)
			}
		}
		recs, _, err := listBatches(context.Background(), a.Store, runs.BatchPrefix(run, 0))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if !r.Done {
				t.Fatalf("record %+v not done: a later attempt would download its file again", r)
			}
		}
		if st := m.srv.BatchStats(); m.downloads.Load() != st.Created {
			t.Fatalf("%d files downloaded for %d batches: want each once", m.downloads.Load(), st.Created)
		}
	})
}

// TestBatchShardPermanentErrorsEndAtOnce: two batches of a round whose
// waits fail for good (the provider refuses the key at their polls, a
// 401) end the shard at once with one non-retryable error naming both
// batches. Their errors used to be joined (errors.Join), which Temporal
// takes for a retryable error of type joinError whatever it holds: the
// shard was retried to its last attempt.
func TestBatchShardPermanentErrorsEndAtOnce(t *testing.T) {
	var mu sync.Mutex
	polled := map[string]bool{}
	_, url := serveBatchesFailing(t, baseline.BatchOptions{Delay: 10 * time.Millisecond}, func(w http.ResponseWriter, r *http.Request) bool {
		id, ok := strings.CutPrefix(r.URL.Path, "/v1/batches/")
		if r.Method != http.MethodGet || !ok || strings.Contains(id, "/") {
			return false
		}
		mu.Lock()
		polled[id] = true
		mu.Unlock()
		http.Error(w, `{"error":{"message":"injected: key revoked","type":"invalid_request_error"}}`, http.StatusUnauthorized)
		return true
	})
	ctx := context.Background()
	task := &dialogueTask{}
	a, run := generatedShard(t, &task.fakeTask, 8, 4)
	if err := a.Store.Delete(ctx, runs.ShardKey(run, 0)); err != nil {
		t.Fatal(err)
	}
	a.Benchmarks = benchmarktest.Registry(t, benchmarktest.Task(task, schemas.Table{Name: "item", Version: 1}))
	var plan runs.Plan
	if err := blob.GetJSON(ctx, a.Store, runs.PlanKey(run), &plan); err != nil {
		t.Fatal(err)
	}
	plan.Batch = true
	if err := blob.PutJSON(ctx, a.Store, runs.PlanKey(run), plan); err != nil {
		t.Fatal(err)
	}
	cfg := fastBatches
	cfg.MaxRequests = 4 // two batches of 4
	gw, err := gateway.New(gateway.Options{Config: &gateway.Config{Providers: map[string]*gateway.Provider{
		gateway.BaselineProvider: {BaseURL: url, Batch: &cfg}}}})
	if err != nil {
		t.Fatal(err)
	}
	a.Gateway, a.SampleConcurrency, a.retryBase = gw, 4, time.Millisecond
	env, _ := activityEnv(ctx, a)
	_, err = env.ExecuteActivity(a.RunShard, RunShardInput{RunID: run, Shard: 0})
	if len(polled) != 2 {
		t.Fatalf("batches polled %v: want 2", polled)
	}
	if !isNonRetryable(err) {
		t.Fatalf("RunShard = %v: want a non-retryable error", err)
	}
	for id := range polled {
		if !strings.Contains(err.Error(), "batch "+id) || !strings.Contains(err.Error(), "injected: key revoked") {
			t.Fatalf("RunShard = %v: want it to name batch %s and why", err, id)
		}
	}
}

// TestBatchErrors: the one error of a round's failed batches is nil when
// none failed, the context's when it ended, non-retryable when one of
// them is (typed as that one), else retryable after the longest delay
// asked; it names every failed batch.
func TestBatchErrors(t *testing.T) {
	jobs := []*batchJob{{rec: batchRecord{ID: "b1", Key: "k1"}}, {rec: batchRecord{ID: "b2", Key: "k2"}}, {rec: batchRecord{Key: "k3"}}}
	retryable := temporal.NewApplicationErrorWithOptions("slow down", "retryable-rate-limit", temporal.ApplicationErrorOptions{NextRetryDelay: time.Minute})
	permanent := temporal.NewNonRetryableApplicationError("no such key", ErrTypeAuth, nil)
	store := fmt.Errorf("write state: %w", errors.New("connection reset"))
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name         string
		ctx          context.Context
		errs         []error
		want         error // a context's error, or nil
		nonRetryable bool
		typ          string
		delay        time.Duration
		names        []string
	}{
		{name: "none", errs: []error{nil, nil, nil}},
		{name: "one permanent", errs: []error{nil, permanent, nil}, nonRetryable: true, typ: ErrTypeAuth, names: []string{"batch b2 (k2): no such key"}},
		{name: "permanent among retryable", errs: []error{retryable, store, permanent}, nonRetryable: true, typ: ErrTypeAuth,
			names: []string{"3 of 3 batches failed", "batch b1 (k1): slow down", "batch b2 (k2): write state: connection reset", "batch not created (k3): no such key"}},
		{name: "retryable", errs: []error{store, retryable, nil}, typ: ErrTypeBatchFailed, delay: time.Minute,
			names: []string{"2 of 3 batches failed", "batch b1 (k1)", "batch b2 (k2): slow down"}},
		{name: "cancelled", ctx: cancelled, errs: []error{context.Canceled, permanent, nil}, want: context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := cmp.Or(tc.ctx, context.Background())
			err := batchErrors(ctx, jobs, tc.errs)
			if tc.names == nil {
				if err != tc.want {
					t.Fatalf("batchErrors = %v, want %v", err, tc.want)
				}
				return
			}
			var ae *temporal.ApplicationError
			if !errors.As(err, &ae) || ae.NonRetryable() != tc.nonRetryable || ae.Type() != tc.typ || ae.NextRetryDelay() != tc.delay {
				t.Fatalf("batchErrors = %#v, want an ApplicationError non-retryable %v of type %s after %s", err, tc.nonRetryable, tc.typ, tc.delay)
			}
			for _, s := range tc.names {
				if !strings.Contains(ae.Message(), s) {
					t.Fatalf("batchErrors = %q: want it to say %q", ae.Message(), s)
				}
			}
		})
	}
}
