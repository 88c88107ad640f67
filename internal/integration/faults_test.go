package integration

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/benchline/benchline/internal/wfclient"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/bfcl"
	"github.com/benchline/benchline/datasets/synthetic"
	"github.com/benchline/benchline/internal/aggregate"
	"github.com/benchline/benchline/internal/app"
	"github.com/benchline/benchline/internal/baseline"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/workflows"
)

// faultsEnv selects the fault suite's size: "long" for `make test-faults`,
// anything else (unset) for the short form `make test` runs.
const faultsEnv = "BENCHLINE_FAULTS"

// faultSize is how big a fault-suite run is and what it injects.
type faultSize struct {
	name                 string
	syntheticN, bfclN    int // samples of the two evaluations
	syntheticShard       int
	bfclShard            int
	maxShards            int
	buildRows, buildPart int // the dataset build running meanwhile
	buildDelay           int // its pause per 10,000 rows, in ms
	// faults are injected in this order: the first once the build has
	// written a part, the others once the synthetic run has done their
	// share of its samples.
	faults []faultAt
	model  baseline.Faults
	limit  time.Duration // the whole run
}

// A faultAt is one injected fault and when it is due.
type faultAt struct {
	kind  string  // "worker" (SIGKILL every worker process), "temporal" or "s3"
	share float64 // of the synthetic run's samples done (not for the first fault)
}

func faultSizes() faultSize {
	if os.Getenv(faultsEnv) == "long" {
		return faultSize{name: "long", syntheticN: 20_000, bfclN: 6_000, syntheticShard: 500, bfclShard: 200, maxShards: 4,
			buildRows: 300_000, buildPart: 10_000, buildDelay: 3000,
			faults: []faultAt{{"worker", 0}, {"temporal", 0.18}, {"worker", 0.3}, {"s3", 0.42}, {"worker", 0.55},
				{"temporal", 0.65}, {"s3", 0.75}, {"worker", 0.85}},
			model: baseline.Faults{Latency: 40 * time.Millisecond, RateLimit: 0.04, RetryAfter: 200 * time.Millisecond,
				ServerError: 0.04, Timeout: 0.004, Drop: 0.02, Seed: 11},
			limit: 25 * time.Minute}
	}
	return faultSize{name: "short", syntheticN: 3_000, bfclN: 2_000, syntheticShard: 300, bfclShard: 100, maxShards: 2,
		buildRows: 120_000, buildPart: 10_000, buildDelay: 3000,
		faults: []faultAt{{"worker", 0}, {"temporal", 0.4}, {"s3", 0.7}},
		model: baseline.Faults{Latency: 25 * time.Millisecond, RateLimit: 0.02, RetryAfter: 200 * time.Millisecond,
			ServerError: 0.02, Timeout: 0.002, Drop: 0.01, Seed: 7},
		limit: 8 * time.Minute}
}

// Prices of the baseline provider in the fault suite, so cost is counted.
const faultInPrice, faultOutPrice = 1.5, 4.0

// ledger records, for every distinct chat request the model server
// answered 200, the usage of its answer: the independent account of what
// each sample costs, once.
type ledger struct {
	next     http.Handler
	mu       sync.Mutex
	answered map[[32]byte][2]int // request hash -> prompt, completion tokens
}

func (l *ledger) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	rec := &recorder{ResponseWriter: w, status: http.StatusOK}
	l.next.ServeHTTP(rec, r)
	if rec.status != http.StatusOK || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		return
	}
	var resp struct {
		Usage struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
	if json.Unmarshal(rec.body.Bytes(), &resp) != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.answered[sha256.Sum256(body)] = [2]int{resp.Usage.PromptTokens, resp.Usage.CompletionTokens}
}

// costs returns how many distinct requests were answered and their cost.
func (l *ledger) costs() (n int, usd float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, u := range l.answered {
		usd += (float64(u[0])*faultInPrice + float64(u[1])*faultOutPrice) / 1e6
	}
	return len(l.answered), usd
}

// recorder keeps a copy of the response for the ledger.
type recorder struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (r *recorder) WriteHeader(code int) { r.status = code; r.ResponseWriter.WriteHeader(code) }
func (r *recorder) Write(b []byte) (int, error) {
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}

// bfclVariants writes a BFCL source of about n items: every bundled item
// repeated with new ids and a numbered question, so requests are distinct.
func bfclVariants(t *testing.T, n int) string {
	t.Helper()
	src := "../../datasets/bfcl/fixtures"
	names, err := filepath.Glob(filepath.Join(src, "BFCL_v4_*.json"))
	if err != nil || len(names) == 0 {
		t.Fatalf("fixtures: %v", err)
	}
	items := 0
	for _, q := range names {
		b, _ := os.ReadFile(q)
		items += bytes.Count(b, []byte("\n"))
	}
	copies := (n + items - 1) / items
	files := map[string]string{}
	for _, q := range names {
		base := filepath.Base(q)
		for _, rel := range []string{base, "possible_answer/" + base} {
			b, err := os.ReadFile(filepath.Join(src, rel))
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			var out strings.Builder
			for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				for v := range copies {
					var m map[string]any
					if err := json.Unmarshal([]byte(line), &m); err != nil {
						t.Fatal(err)
					}
					m["id"] = fmt.Sprintf("%s_v%d", m["id"], v)
					if turns, ok := m["question"].([]any); ok {
						for _, msg := range turns[0].([]any) {
							if mm := msg.(map[string]any); mm["role"] == "user" {
								mm["content"] = fmt.Sprintf("%s (case %d)", mm["content"], v)
							}
						}
					}
					enc, _ := json.Marshal(m)
					out.Write(append(enc, '\n'))
				}
			}
			files[rel] = out.String()
		}
	}
	dir := t.TempDir()
	writeFiles(t, dir, files)
	return dir
}

// job is one workflow of the fault suite.
type job struct {
	name   string
	start  time.Time
	wall   time.Duration
	done   atomic.Bool
	err    error
	faults int // faults injected while the job was running
}

// TestFaultSuite evaluates a model on two benchmarks (synthetic and BFCL)
// and builds a dataset, on two worker processes, while SIGKILLing workers,
// restarting the Temporal server and MinIO, and injecting model errors
// (429, 500, hangs, dropped connections) and latency. Afterwards every
// sample has exactly one result, each summary equals the sum of its
// shards and the workflow's own totals, every answer's cost is counted
// once, scores are what a fault-free run gives, and no reader ever saw a
// partial dataset version. BENCHLINE_FAULTS=long (make test-faults) runs
// the long form.
func TestFaultSuite(t *testing.T) {
	sz := faultSizes()
	bin := buildBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), sz.limit)
	defer cancel()

	// The model: the baseline server with faults, behind the ledger.
	model, err := baseline.New(baseline.Options{References: &app.StoreReferences{Store: stack.Store}, Faults: sz.model, MaxHang: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	led := &ledger{next: model, answered: map[[32]byte][2]int{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: led, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	providers := filepath.Join(t.TempDir(), "providers.yaml")
	writeFiles(t, filepath.Dir(providers), map[string]string{"providers.yaml": fmt.Sprintf(
		"providers:\n  baseline:\n    base_url: http://%s/v1\n    timeout: 2s\n    max_concurrency: 64\n    prices: {input_per_mtok: %v, output_per_mtok: %v}\n",
		ln.Addr(), faultInPrice, faultOutPrice)})

	// The datasets, built before the faults start.
	synthDS := buildSynthetic(t, sz.syntheticN, 5101)
	built, err := buildVia(t, bfcl.Name, datasets.Request{Source: bfclVariants(t, sz.bfclN)})
	if err != nil {
		t.Fatal(err)
	}
	bfclDS := bfcl.Name + "@" + built.Version

	const queue = "faults"
	cfg := stack.Stack.Config
	cfg.Temporal.TaskQueue = queue
	env := workerEnv(queue, "http://"+ln.Addr().String()+"/v1", "BENCHLINE_PROVIDERS="+providers)
	workerArgs := []string{"worker", "--queues", "main", "--sample-concurrency", "2", "--checkpoint-interval", "1ms"}
	workers := []*procWorker{startProcWorker(t, bin, env, workerArgs...), startProcWorker(t, bin, env, workerArgs...)}

	// Start the two evaluations and the build.
	type evalJob struct {
		*job
		plan   runs.Plan
		result workflows.EvaluateModelResult
	}
	startEval := func(name, ds string, shard int) *evalJob {
		in := workflows.EvaluateModelInput{Request: runs.Request{Dataset: ds, Model: "baseline/reference", ShardSize: shard},
			MaxConcurrentShards: sz.maxShards, ShardHeartbeatTimeout: 5 * time.Second}
		run, plan, err := wfclient.StartEval(ctx, stack.Client, cfg, stack.Store, in)
		if err != nil {
			t.Fatal(err)
		}
		terminateOnCleanup(t, wfclient.EvalWorkflowID(plan.RunID))
		j := &evalJob{job: &job{name: name + " " + ds, start: time.Now()}, plan: plan}
		go func() {
			j.result, j.err = wfclient.WaitEval(ctx, stack.Client, run, plan.RunID, time.Hour, nil)
			j.wall = time.Since(j.start)
			j.done.Store(true)
		}()
		return j
	}
	synthJob := startEval("eval", synthDS, sz.syntheticShard)
	bfclJob := startEval("eval", bfclDS, sz.bfclShard)

	buildReq := datasets.Request{Params: map[string]string{"rows": fmt.Sprint(sz.buildRows), "part_rows": fmt.Sprint(sz.buildPart),
		"seed": "5102", "delay_ms_per_10k": fmt.Sprint(sz.buildDelay)}}
	buildPlan, err := synthetic.Builder{}.Plan(ctx, datasets.Env{}, buildReq)
	if err != nil {
		t.Fatal(err)
	}
	buildRun, err := wfclient.StartBuild(ctx, stack.Client, cfg, workflows.BuildDatasetInput{Dataset: synthetic.Name, Request: buildReq, MaxParallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	terminateOnCleanup(t, buildRun.GetID())
	buildJob := &job{name: "build synthetic@" + buildPlan.Version, start: time.Now()}
	var buildRes workflows.BuildDatasetResult
	go func() {
		buildJob.err = buildRun.Get(ctx, &buildRes)
		buildJob.wall = time.Since(buildJob.start)
		buildJob.done.Store(true)
	}()
	jobs := []*job{synthJob.job, bfclJob.job, buildJob}

	// Watch what readers see of the version being built, throughout.
	watchCtx, stopWatch := context.WithCancel(ctx)
	watched := make(chan []string, 1)
	go func() { watched <- watchVersion(watchCtx, buildPlan.Version) }()

	// Inject the faults at their points.
	reached := func(i int, f faultAt) bool {
		if i == 0 { // mid-build: some part written, the version not published
			infos, err := stack.Store.List(ctx, catalog.Dir(synthetic.Name, buildPlan.Version)+"data/")
			return (err == nil && len(infos) > 0) || buildJob.done.Load()
		}
		p, err := wfclient.QueryProgress(ctx, stack.Client, synthJob.plan.RunID)
		return (err == nil && p.SamplesDone >= int64(f.share*float64(sz.syntheticN))) || synthJob.done.Load()
	}
	injected := map[string]int{}
	for i, f := range sz.faults {
		for !reached(i, f) {
			select {
			case <-ctx.Done():
				t.Fatalf("fault %d (%s) was never due: %v", i, f.kind, ctx.Err())
			case <-time.After(100 * time.Millisecond):
			}
		}
		for _, j := range jobs {
			if !j.done.Load() {
				j.faults++
			}
		}
		switch f.kind {
		case "worker": // every worker, so that whatever is in flight is cut off
			for k, w := range workers {
				w.kill()
				workers[k] = startProcWorker(t, bin, env, workerArgs...)
			}
		case "temporal":
			err = stack.Stack.RestartTemporal(ctx)
		case "s3":
			err = stack.Stack.RestartS3(ctx)
		}
		if err != nil {
			t.Fatalf("fault %d (%s): %v", i, f.kind, err)
		}
		injected[f.kind]++
	}

	for _, j := range jobs {
		for !j.done.Load() {
			select {
			case <-ctx.Done():
				t.Fatalf("%s did not finish within %v", j.name, sz.limit)
			case <-time.After(100 * time.Millisecond):
			}
		}
		if j.err != nil {
			t.Fatalf("%s: %v", j.name, j.err)
		}
		if j.faults == 0 {
			t.Errorf("%s finished before the first fault: the suite proved nothing for it (make it bigger)", j.name)
		}
	}
	stopWatch()
	if bad := <-watched; len(bad) > 0 {
		t.Errorf("readers saw a partial version %s: %v", buildPlan.Version, bad)
	}

	// Afterwards: exactly once, totals, cost, scores.
	type line struct {
		name                                             string
		faults, retried, samples, rows, dups, lost, left int
		cost                                             float64
		wall                                             time.Duration
	}
	var lines []line
	var costSum float64
	var samples int
	for _, j := range []*evalJob{synthJob, bfclJob} {
		s := j.result.Summary
		_, rows := resultRows(ctx, t, j.plan.RunID)
		seen := make([]int, j.plan.Samples)
		var sum aggregate.Summary
		for _, r := range rows {
			if r.SampleIndex < 0 || r.SampleIndex >= j.plan.Samples {
				t.Fatalf("%s: sample index %d out of range", j.name, r.SampleIndex)
			}
			seen[r.SampleIndex]++
			sum.Calls += int64(r.Calls)
			sum.PromptTokens += r.PromptTokens
			sum.CompletionTokens += r.CompletionTokens
			sum.CostUSD += r.CostUSD
			if r.ErrorClass != "" {
				t.Errorf("%s: sample %s: %s: %s", j.name, r.SampleID, r.ErrorClass, r.ErrorMessage)
			}
		}
		dups, lost := 0, 0
		for _, c := range seen {
			dups += max(c-1, 0)
			if c == 0 {
				lost++
			}
		}
		if dups > 0 || lost > 0 {
			t.Errorf("%s: %d duplicate and %d lost results over %d samples", j.name, dups, lost, j.plan.Samples)
		}
		if s.Samples != int64(len(rows)) || s.Calls != sum.Calls || s.PromptTokens != sum.PromptTokens ||
			s.CompletionTokens != sum.CompletionTokens || !near(s.CostUSD, sum.CostUSD) {
			t.Errorf("%s: summary %d samples, %d calls, %d+%d tokens, $%v; the shards hold %d, %d, %d+%d, $%v", j.name,
				s.Samples, s.Calls, s.PromptTokens, s.CompletionTokens, s.CostUSD, len(rows), sum.Calls, sum.PromptTokens, sum.CompletionTokens, sum.CostUSD)
		}
		if p, err := wfclient.QueryProgress(ctx, stack.Client, j.plan.RunID); err != nil {
			t.Errorf("%s: progress of the finished run: %v", j.name, err)
		} else if p.SamplesDone != s.Samples || p.InfraFailed != s.InfraFailed || p.ModelFailed != s.ModelFailed || !near(p.CostUSD, s.CostUSD) {
			t.Errorf("%s: the workflow counted %d samples (%d infra, %d model failures), $%v; the summary %d (%d, %d), $%v", j.name,
				p.SamplesDone, p.InfraFailed, p.ModelFailed, p.CostUSD, s.Samples, s.InfraFailed, s.ModelFailed, s.CostUSD)
		}
		if len(s.Metrics) == 0 {
			t.Errorf("%s: the summary has no metrics", j.name)
		} else if headline := s.Metrics[0]; headline.Mean != 1 || headline.N != int(j.plan.Samples) {
			t.Errorf("%s: %s = %v over %d samples; baseline/reference scores 1 on every sample without faults", j.name, headline.Name, headline.Mean, headline.N)
		}
		left := leftoverCheckpoints(ctx, t, j.plan.RunID)
		if left > 0 {
			t.Errorf("%s: %d checkpoint files left under partial/ after the run", j.name, left)
		}
		costSum += s.CostUSD
		samples += len(rows)
		lines = append(lines, line{j.name, j.faults, retriedActivities(ctx, t, wfclient.EvalWorkflowID(j.plan.RunID)), int(j.plan.Samples), len(rows), dups, lost, left, s.CostUSD, j.wall})
	}
	retried := 0
	for _, l := range lines {
		retried += l.retried
	}
	distinct, oracle := led.costs()
	if costSum <= 0 || distinct != samples || !near(costSum, oracle) {
		t.Errorf("cost: the summaries say $%v for %d samples; the model answered %d distinct requests costing $%v", costSum, samples, distinct, oracle)
	}

	// The build: the planned version, every row once, verified hashes.
	dups, lost := checkBuiltOnce(ctx, t, buildPlan.Version, sz.buildRows)
	if buildRes.Version != buildPlan.Version || buildRes.Rows != int64(sz.buildRows) {
		t.Errorf("build: %+v, want version %s with %d rows", buildRes, buildPlan.Version, sz.buildRows)
	}
	buildRetried := retriedActivities(ctx, t, buildRun.GetID())
	if retried+buildRetried == 0 {
		t.Error("no activity ran twice: the kills interrupted nothing, and the suite proved little")
	}
	lines = append(lines, line{buildJob.name, buildJob.faults, buildRetried, sz.buildRows, sz.buildRows - lost, dups, lost, 0, 0, buildJob.wall})

	st := model.Stats()
	var tab bytes.Buffer
	tw := tabwriter.NewWriter(&tab, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "fault\tinjected\t\n")
	for _, k := range []string{"worker", "temporal", "s3"} {
		fmt.Fprintf(tw, "%s\t%d\t\n", map[string]string{"worker": "SIGKILL of both workers", "temporal": "Temporal restart", "s3": "MinIO restart"}[k], injected[k])
	}
	fmt.Fprintf(tw, "model 429\t%d\t\nmodel 500\t%d\t\nmodel hang (2s timeout)\t%d\t\nmodel dropped connection\t%d\t\nmodel latency per request\t%v\t\n",
		st.RateLimited, st.ServerErrors, st.Timeouts, st.Dropped, sz.model.Latency)
	fmt.Fprintf(tw, "model requests / distinct answered\t%d / %d\t\n", st.Requests, distinct)
	tw.Flush()
	tw = tabwriter.NewWriter(&tab, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "\njob\tfaults during\tretried activities\tsamples\tresults\tduplicates\tlosses\tleft checkpoints\tcost USD\twall\t\n")
	for _, l := range lines {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%.6f\t%v\t\n", l.name, l.faults, l.retried, l.samples, l.rows, l.dups, l.lost, l.left, l.cost, l.wall.Round(100*time.Millisecond))
	}
	fmt.Fprintf(tw, "cost of distinct answers (ledger)\t\t\t\t\t\t\t\t%.6f\t\t\n", oracle)
	tw.Flush()
	t.Logf("fault suite (%s):\n%s", sz.name, tab.String())
}

// near reports whether two sums of the same costs agree up to rounding.
func near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// watchVersion polls what a reader of synthetic@version sees until ctx
// ends: once the manifest is visible every file must match it, and once
// latest names the version its manifest must be there. It returns the
// violations seen (store errors while MinIO restarts are not violations).
func watchVersion(ctx context.Context, version string) []string {
	var bad []string
	for ctx.Err() == nil {
		if m, err := catalog.ReadManifest(ctx, stack.Store, synthetic.Name, version); err == nil {
			if err := catalog.Verify(ctx, stack.Store, m); errors.Is(err, catalog.ErrMismatch) {
				bad = append(bad, err.Error())
			}
		} else if errors.Is(err, catalog.ErrNoDataset) {
			if m, err := catalog.Resolve(ctx, stack.Store, synthetic.Name+"@latest"); err == nil && m.Version == version {
				bad = append(bad, "latest names "+version+" before its manifest is readable")
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
	return bad
}

// retriedActivities counts the activity attempts after the first in the
// history of workflow id (its latest run): how often the faults made work
// run again.
func retriedActivities(ctx context.Context, t *testing.T, id string) int {
	t.Helper()
	iter := stack.Client.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	n := 0
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			t.Fatal(err)
		}
		if a := ev.GetActivityTaskStartedEventAttributes(); a != nil && a.Attempt > 1 {
			n++
		}
	}
	return n
}

// leftoverCheckpoints counts the checkpoint files of a finished run.
func leftoverCheckpoints(ctx context.Context, t *testing.T, runID string) int {
	t.Helper()
	infos, err := stack.Store.List(ctx, runs.Dir(runID)+"partial/")
	if err != nil {
		t.Fatal(err)
	}
	return len(infos)
}

// checkBuiltOnce verifies a built synthetic version's hashes and counts
// duplicated and lost row indices.
func checkBuiltOnce(ctx context.Context, t *testing.T, version string, rows int) (dups, lost int) {
	t.Helper()
	m := verifiedManifest(t, synthetic.Name, version)
	seen := make([]uint8, rows)
	type idx struct {
		Index int64 `parquet:"index"`
	}
	for _, f := range m.Files {
		err := pq.ReadEach(ctx, stack.Store, catalog.Dir(m.Name, m.Version)+f.Path, func(batch []idx) error {
			for _, r := range batch {
				if r.Index < 0 || r.Index >= int64(rows) {
					return fmt.Errorf("row index %d out of range", r.Index)
				}
				seen[r.Index]++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range seen {
		dups += max(int(n)-1, 0)
		if n == 0 {
			lost++
		}
	}
	if dups > 0 || lost > 0 {
		t.Errorf("build %s: %d duplicated and %d lost rows", version, dups, lost)
	}
	return dups, lost
}
