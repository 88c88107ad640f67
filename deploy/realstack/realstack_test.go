//go:build deploytest

package realstack

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/benchline/benchline/internal/wfclient"

	"github.com/benchline/benchline/internal/aggregate"
	"github.com/benchline/benchline/internal/app"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/s3blob"
	"github.com/benchline/benchline/internal/config"
	"github.com/benchline/benchline/internal/leaderboard"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/registry"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/schemas"
)

// The board refreshed across the faults: two benchmarks (ifevalcode is
// scored on the sandbox queue) and two baseline models.
const (
	boardName = "realstack"
	boardYAML = `name: realstack
benchmarks: [{dataset: bfcl}, {dataset: ifevalcode}]
models: [baseline/reference, baseline/noisy-0.5]
`
	evalShard = 300
)

// A size is how big the evaluation is and which faults come when.
type size struct {
	name     string
	evalRows int // samples of the evaluation run meanwhile (synthetic)
	faults   []fault
}

// A fault is due when the evaluation has done share of its samples:
// "workers" SIGKILLs one worker of each queue and starts its replacement,
// "temporal" SIGKILLs the Temporal server and starts it again.
type fault struct {
	kind  string
	share float64
}

// sizes: the short form runs in `make test`, the long one (BENCHLINE_DEPLOY=long)
// in `make test-deploy`.
var sizes = map[string]size{
	"short": {"short", 6000, []fault{{"workers", 0.2}, {"temporal", 0.5}}},
	"long":  {"long", 24000, []fault{{"workers", 0.15}, {"temporal", 0.35}, {"workers", 0.55}, {"temporal", 0.75}}},
}

// testSize reads BENCHLINE_DEPLOY: unset or "short", or "long".
func testSize(t *testing.T) size {
	name := os.Getenv("BENCHLINE_DEPLOY")
	if name == "" {
		name = "short"
	}
	sz, ok := sizes[name]
	if !ok {
		t.Fatalf("realstack: BENCHLINE_DEPLOY=%q: want short or long", name)
	}
	return sz
}

// A cliJob is a benchline command running in the background.
type cliJob struct {
	name  string
	start time.Time
	wall  time.Duration
	out   string
	err   error
	done  atomic.Bool
	// faults counts the faults injected while it ran.
	faults int
}

func startCLI(ctx context.Context, name string, env []string, bin string, args ...string) *cliJob {
	j := &cliJob{name: name, start: time.Now()}
	go func() {
		j.out, j.err = run(ctx, env, bin, args...)
		j.wall = time.Since(j.start)
		j.done.Store(true)
	}()
	return j
}

// TestRealStack starts PostgreSQL, a Temporal server built from
// go.temporal.io/server, MinIO, the baseline model server and two workers
// per queue, every benchline process configured from the Helm chart's
// rendering (the ConfigMap's config.yaml, the Deployments' arguments and
// environment). It refreshes a board and runs an evaluation while one
// worker of each queue is SIGKILLed and the Temporal server is killed and
// restarted, then checks that every run completed with exactly one result
// per sample, that each summary equals the sum of its shards, and that the
// board's latest pointer moved to the new stamp.
func TestRealStack(t *testing.T) {
	began := time.Now()
	sz := testSize(t)
	evalRows := sz.evalRows
	t.Logf("realstack: the %s form: %d samples, %d faults", sz.name, evalRows, len(sz.faults))
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	root, err := os.MkdirTemp("", "benchline-realstack-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(root, 0o755); err != nil { // the postgres user enters it
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("realstack: logs kept in %s/logs", root)
			return
		}
		_ = os.RemoveAll(root)
	})

	// The servers.
	pg := startPostgres(ctx, t, root)
	pki := newPKI(t, filepath.Join(root, "pki"))
	ts := setupTemporal(ctx, t, root, pg, pki)
	ts.start(ctx, t)
	if _, err := ts.cli(ctx, t, "operator", "namespace", "create", "--namespace", "default"); err != nil {
		t.Fatalf("realstack: create the default namespace: %v", err)
	}
	s3Port := startMinIO(ctx, t, root)
	store := s3Store(ctx, t, s3Port)
	baselinePort := freePort(t)

	// The configuration, as the chart renders it for these endpoints, with
	// mutual TLS to Temporal from the Secret tlsSecret names.
	r := renderChart(ctx, t, root, fmt.Sprintf(`temporal: {address: "%s", namespace: default, taskQueue: realstack, tlsSecret: realstack-temporal-tls, tlsServerName: %s}
s3: {bucket: benchline, endpoint: "http://127.0.0.1:%d", region: us-east-1, pathStyle: true}
models: {baselineURL: "http://127.0.0.1:%d/v1"}
main: {replicas: 2}
sandbox: {replicas: 2}
baselines: {enabled: true}
`, ts.address(), tlsServerName, s3Port, baselinePort))
	if r.mainN != 2 || r.sandboxN != 2 {
		t.Fatalf("realstack: the chart renders %d main and %d sandbox replicas, want 2 and 2", r.mainN, r.sandboxN)
	}
	// The config volume as the pods see it: the ConfigMap's files and the
	// kubernetes.io/tls Secret's (tls.crt, tls.key, ca.crt) where the chart
	// projects them.
	tlsSecret := map[string][]byte{}
	for k, f := range map[string]string{"tls.crt": pki.clientCert, "tls.key": pki.clientKey, "ca.crt": pki.ca} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		tlsSecret[k] = b
	}
	cfgPath := mountConfig(t, r, filepath.Join(root, "etc"), map[string]map[string][]byte{"realstack-temporal-tls": tlsSecret})
	// The chart's existingSecret, as environment variables.
	secret := []string{"AWS_ACCESS_KEY_ID=" + config.DevAccessKey, "AWS_SECRET_ACCESS_KEY=" + config.DevSecretKey}
	cfg, err := config.Load(cfgPath, func(k string) (string, bool) {
		for _, kv := range secret {
			if name, v, _ := strings.Cut(kv, "="); name == k {
				return v, true
			}
		}
		return "", false
	})
	if err != nil {
		t.Fatalf("realstack: the chart's config.yaml: %v\n%s", err, r.config)
	}
	if tc := cfg.Temporal.TLS; tc.CertFile == "" || tc.KeyFile == "" || tc.CAFile == "" || tc.ServerName != tlsServerName {
		t.Fatalf("realstack: the chart's config.yaml with tlsSecret set asks for no mutual TLS (%+v):\n%s", tc, r.config)
	}
	if containerMode(t) {
		// The kubelet gives a pod's Secret files to the pod's fsGroup and
		// makes them group-readable (mode|0440): the key (0400) becomes
		// 0440, group fsGroup, which the image's user (65532:65532) reads as
		// its group. Without the chart's fsGroup the key stays 0400 root's and
		// every runtime container fails to read it. The stranger's key, which
		// a refused client container reads, is treated as another such Secret.
		if r.mainFSGroup == nil {
			t.Fatalf("realstack: the chart's main pods set no fsGroup: user 65532 could not read the TLS key (mode 0400):\n%s", r.manifests)
		}
		for _, k := range []string{cfg.Temporal.TLS.KeyFile, cfg.Temporal.TLS.CertFile, cfg.Temporal.TLS.CAFile, pki.rogueKey} {
			fi, err := os.Stat(k)
			if err == nil {
				err = os.Chown(k, -1, int(*r.mainFSGroup))
			}
			if err == nil {
				err = os.Chmod(k, fi.Mode().Perm()|0o440)
			}
			if err != nil {
				t.Fatalf("realstack: fsGroup %d on %s: %v", *r.mainFSGroup, k, err)
			}
		}
	}

	// Every benchline process runs this binary, or in container mode
	// (BENCHLINE_WORKERS=containers) the images' binary in a container.
	bin := filepath.Join(root, "benchline")
	// (Container mode builds it for `benchline demo`, whose scores the
	// containers must reproduce.)
	var eng *engine
	if containerMode(t) {
		eng = newEngine(t, root)
		t.Logf("realstack: container mode: %s and %s, sandbox options %v", runtimeImage, sandboxImage, sandboxSecurityOpts)
	}
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "../../cmd/benchline").CombinedOutput(); err != nil {
		t.Fatalf("realstack: build benchline: %v\n%s", err, out)
	}
	// commandOf is the command line of a benchline process of kind cli,
	// baselines, main or sandbox (a container named name in container mode).
	commandOf := func(kind, name string, env []string, args ...string) (string, []string) {
		if eng == nil {
			return bin, args
		}
		return eng.command(kind, name, env, args)
	}
	// startBenchline starts a long-running benchline process.
	startBenchline := func(kind, name string, env []string, args ...string) *proc {
		b, a := commandOf(kind, name, env, args...)
		p := startProc(t, root, name, env, b, a...)
		if eng != nil {
			p.stop = eng.kill(name)
		}
		return p
	}
	mainEnv := containerEnv(r.main, cfgPath, secret)
	sandboxEnv := containerEnv(r.sandbox, cfgPath, secret)
	cliEnv := mainEnv // benchline commands run with the workers' configuration
	runCLI := func(args ...string) (string, error) {
		b, a := commandOf("cli", "", cliEnv, args...)
		return run(ctx, cliEnv, b, a...)
	}
	startCLIJob := func(name string, args ...string) *cliJob {
		b, a := commandOf("cli", "", cliEnv, args...)
		return startCLI(ctx, name, cliEnv, b, a...)
	}

	type worker struct {
		queue string
		name  string
		args  []string
		env   []string
		p     *proc
		n     int
		port  int // of its /metrics
	}
	var workers []*worker
	startWorker := func(w *worker) {
		w.n++
		w.port = freePort(t)
		w.p = startBenchline(w.queue, fmt.Sprintf("%s-%d", w.name, w.n), w.env,
			withArg(w.args, "--metrics-addr", fmt.Sprintf("127.0.0.1:%d", w.port))...)
	}
	for _, q := range []struct {
		name string
		c    container
		env  []string
	}{{"main", r.main, mainEnv}, {"main", r.main, mainEnv}, {"sandbox", r.sandbox, sandboxEnv}, {"sandbox", r.sandbox, sandboxEnv}} {
		w := &worker{queue: q.name, name: fmt.Sprintf("worker-%s-%d", q.name, len(workers)), args: q.c.Args, env: q.env}
		startWorker(w)
		workers = append(workers, w)
	}

	// The datasets (built by the main workers).
	for _, args := range [][]string{{"dataset", "build", "bfcl"}, {"dataset", "build", "ifevalcode"},
		// A build with --param is a variant (latest stays): tagged, and
		// evaluated by its tag.
		{"dataset", "build", "synthetic", "--param", fmt.Sprintf("rows=%d", evalRows), "--param", "seed=1501", "--as", "realstack"}} {
		if _, err := runCLI(args...); err != nil {
			t.Fatalf("realstack: %v\nworker log:\n%s", err, logTail(root, "worker-main-0-1"))
		}
	}
	if eng != nil {
		checkBuildInfo(ctx, t, eng, root, "worker-main-0-1", workers[0].port)
	}
	// The server answers only a client with a certificate its CA signed.
	refusedClients(ctx, t, root, cfgPath, pki, func(ctx context.Context, env []string, args ...string) (string, error) {
		b, a := commandOf("cli", "", env, args...)
		return run(ctx, env, b, a...)
	}, func(cfgFile string, extra ...string) []string {
		return append(containerEnv(r.main, cfgFile, secret), extra...)
	})
	// The baseline server as the chart runs it (its address moved to this
	// run's port), with 60ms of latency per request so that the runs are
	// still going when the faults come.
	baseArgs := append(withArg(r.baselines.Args, "--addr", fmt.Sprintf("127.0.0.1:%d", baselinePort)), "--faults", "latency=60ms")
	startBenchline("baselines", "baselines", containerEnv(r.baselines, cfgPath, secret), baseArgs...)
	waitFor(ctx, t, "baseline server", time.Minute, func() error {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/v1/models", baselinePort))
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET /v1/models: status %d", resp.StatusCode)
		}
		return nil
	})

	// The jobs: the board refresh and the evaluation, side by side.
	boardPath := filepath.Join(root, "board.yaml")
	if err := os.WriteFile(boardPath, []byte(boardYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	var before string
	if b, err := readKey(ctx, store, leaderboard.LatestKey(boardName)); err == nil {
		before = string(b)
	}
	evalArgs := []string{"eval", "--dataset", "synthetic@realstack", "--model", "baseline/reference", "--shard-size", fmt.Sprint(evalShard), "--parallel", "2", "--no-cache"}
	out, err := runCLI(append(evalArgs, "--no-wait")...)
	if err != nil {
		t.Fatalf("realstack: start the evaluation: %v", err)
	}
	evalRun := strings.TrimSpace(out)
	evalJob := startCLIJob("eval synthetic", append(evalArgs, "--json")...)
	boardJob := startCLIJob("refresh "+boardName, "leaderboard", "refresh", boardPath, "--json")
	jobs := []*cliJob{evalJob, boardJob}

	// The faults (short form: one main and one sandbox worker SIGKILLed at a
	// fifth of the evaluation, the Temporal server SIGKILLed and restarted at half).
	c, err := app.Dial(cfg, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	evalDone := func(share float64) bool {
		p, err := wfclient.QueryProgress(ctx, c, evalRun)
		return (err == nil && p.SamplesDone >= int64(share*float64(evalRows))) || evalJob.done.Load()
	}
	injected := map[string]int{}
	for _, f := range sz.faults {
		for !evalDone(f.share) {
			select {
			case <-ctx.Done():
				t.Fatalf("realstack: the %s fault was never due: %v", f.kind, ctx.Err())
			case <-time.After(200 * time.Millisecond):
			}
		}
		for _, j := range jobs {
			if !j.done.Load() {
				j.faults++
			}
		}
		switch f.kind {
		case "workers":
			for _, i := range []int{0, 2} { // one of each queue; the pod is replaced, as Kubernetes would
				workers[i].p.kill()
				injected["worker SIGKILL ("+workers[i].queue+")"]++
				startWorker(workers[i])
			}
		case "temporal":
			ts.p.kill()
			ts.start(ctx, t)
			injected["Temporal server SIGKILL + restart"]++
		}
	}
	for _, j := range jobs {
		for !j.done.Load() {
			select {
			case <-ctx.Done():
				t.Fatalf("realstack: %s did not finish: %v", j.name, ctx.Err())
			case <-time.After(200 * time.Millisecond):
			}
		}
		if j.err != nil {
			t.Fatalf("realstack: %s: %v\nmain worker log:\n%s", j.name, j.err, logTail(root, "worker-main-1-1"))
		}
	}
	if evalJob.faults == 0 {
		t.Errorf("realstack: the evaluation finished before the first fault: the test proved nothing (make it bigger)")
	}

	// The board: the stamp is written and latest moved to it.
	var rep struct {
		Board       string `json:"board"`
		Stamp       string `json:"stamp"`
		RunsStarted int    `json:"runs_started"`
		RunsReused  int    `json:"runs_reused"`
		ModelCalls  int    `json:"model_calls"`
	}
	if err := json.Unmarshal([]byte(boardJob.out), &rep); err != nil {
		t.Fatalf("realstack: refresh --json: %v: %q", err, boardJob.out)
	}
	after, err := readKey(ctx, store, leaderboard.LatestKey(boardName))
	if err != nil || strings.TrimSpace(string(after)) != rep.Stamp || string(after) == before {
		t.Errorf("realstack: latest of %s is %q (before %q, err %v), want the new stamp %s", boardName, after, before, err, rep.Stamp)
	}
	var scores leaderboard.Scores
	if err := blob.GetJSON(ctx, store, leaderboard.ScoresKey(boardName, rep.Stamp), &scores); err != nil {
		t.Fatal(err)
	}
	if len(scores.Failed) > 0 || len(scores.Cells) != 4 {
		t.Errorf("realstack: the stamp has %d cells and %d failed, want 4 and 0: %+v", len(scores.Cells), len(scores.Failed), scores.Failed)
	}

	// Every run: exactly one result per sample, summary = sum of shards.
	type line struct {
		what string
		runCheck
	}
	var lines []line
	seenRun := map[string]bool{}
	check := func(what, runID string) {
		if seenRun[runID] {
			return
		}
		seenRun[runID] = true
		rc := checkRun(ctx, t, store, runID)
		// The chart's baseline server reads the references the runs write
		// (serve-baselines --references-store): the reference model is
		// right on every sample, faults or not.
		if strings.Contains(what, "baseline/reference") && rc.mean != 1 {
			t.Errorf("realstack: %s (run %s): %s %.3f; baseline/reference must score 1 from the references in the store", what, runID, rc.metric, rc.mean)
		}
		lines = append(lines, line{what, rc})
	}
	check("eval synthetic x baseline/reference", evalRun)
	for _, cell := range scores.Cells {
		check(cell.Dataset+" x "+cell.Model, cell.RunID)
	}

	// Container mode: every demo benchmark, evaluated through the containers
	// as `benchline demo` evaluates it (its board file: the same dataset
	// versions, models, judges and shard size), must score what the demo prints.
	if eng != nil {
		boardFile, want := runDemo(ctx, t, bin, filepath.Join(root, "demo"))
		for _, b := range registry.Default().All() {
			if b.Demo == nil {
				continue
			}
			args := []string{"dataset", "build", b.Name()}
			for _, k := range slices.Sorted(maps.Keys(b.Demo.Params)) {
				args = append(args, "--param", k+"="+b.Demo.Params[k])
			}
			if _, err := runCLI(args...); err != nil {
				t.Fatalf("realstack: the demo's dataset %s: %v", b.Name(), err)
			}
		}
		// And the demo's task files (docs/tasks.md), which it wrote into
		// its directory and built with dataset build --task; and its
		// lm-evaluation-harness task and promptfoo config, as the task
		// files the demo converted them into beside them (the folder is
		// mounted read-only, where dataset build --task on the originals
		// would write the same files again).
		taskFiles, err := filepath.Glob(filepath.Join(filepath.Dir(boardFile), "tasks", "*", "task.yaml"))
		if err != nil || len(taskFiles) == 0 {
			t.Fatalf("realstack: the demo wrote no task file under %s/tasks (%v)", filepath.Dir(boardFile), err)
		}
		suites, err := filepath.Glob(filepath.Join(filepath.Dir(boardFile), "suites", "*", "*.task.yaml"))
		if err != nil || len(suites) < 2 {
			t.Fatalf("realstack: the demo converted %d suites under %s/suites, want its lm-eval task and promptfoo config (%v)", len(suites), filepath.Dir(boardFile), err)
		}
		taskFiles = append(taskFiles, suites...)
		for _, f := range taskFiles {
			if _, err := runCLI("dataset", "build", "--task", f); err != nil {
				t.Fatalf("realstack: the demo's task file %s: %v", f, err)
			}
		}
		out, err := runCLI("leaderboard", "refresh", boardFile, "--json")
		if err != nil {
			t.Fatalf("realstack: refresh the demo's board through the containers: %v", err)
		}
		var demoRep struct{ Board, Stamp string }
		if err := json.Unmarshal([]byte(out), &demoRep); err != nil {
			t.Fatalf("realstack: refresh --json: %v: %q", err, out)
		}
		var demoScores leaderboard.Scores
		if err := blob.GetJSON(ctx, store, leaderboard.ScoresKey(demoRep.Board, demoRep.Stamp), &demoScores); err != nil {
			t.Fatal(err)
		}
		if len(demoScores.Failed) > 0 || len(demoScores.Cells) != len(want) {
			t.Errorf("realstack: the demo board through the containers: %d cells, %d failed (%+v); the demo printed %d",
				len(demoScores.Cells), len(demoScores.Failed), demoScores.Failed, len(want))
		}
		for _, c := range demoScores.Cells {
			key := c.Dataset + " x " + c.Model
			got := aggregate.MetricStat{Name: c.Metric, N: int(c.N), Mean: c.Mean}.MeanText()
			w, ok := want[key]
			if !ok || w.metric != c.Metric || w.mean != got || w.n != c.N {
				t.Errorf("realstack: %s through the containers: %s %s over %d; the demo printed %s %s over %d", key, c.Metric, got, c.N, w.metric, w.mean, w.n)
			}
			rc := checkRun(ctx, t, store, c.RunID)
			lines = append(lines, line{"demo: " + key + " (demo " + w.mean + ")", rc})
		}
	}

	var tab bytes.Buffer
	tw := tabwriter.NewWriter(&tab, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "fault\tinjected\t\n")
	for _, k := range slices.Sorted(maps.Keys(injected)) {
		fmt.Fprintf(tw, "%s\t%d\t\n", k, injected[k])
	}
	tw.Flush()
	tw = tabwriter.NewWriter(&tab, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "\njob\tfaults during\twall\t\n")
	for _, j := range jobs {
		fmt.Fprintf(tw, "%s\t%d\t%v\t\n", j.name, j.faults, j.wall.Round(100*time.Millisecond))
	}
	tw.Flush()
	tw = tabwriter.NewWriter(&tab, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "\nrun\tsamples\tresults\tduplicates\tlosses\tsummary = shards\terrored\theadline\t\n")
	for _, l := range lines {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%v\t%d\t%s %.3f\t\n", l.what, l.samples, l.rows, l.dups, l.lost, l.summaryOK, l.failed, l.metric, l.mean)
	}
	tw.Flush()
	fmt.Fprintf(&tab, "\n%s form; board %s: stamp %s, %d runs started, %d reused, %d model calls; Temporal server started %d times; whole test %v\n",
		sz.name, rep.Board, rep.Stamp, rep.RunsStarted, rep.RunsReused, rep.ModelCalls, ts.starts, time.Since(began).Round(time.Second))
	t.Logf("real stack:\n%s", tab.String())
}

type runCheck struct {
	samples, rows, dups, lost int
	failed                    int // results with an error class (model failures are scored)
	metric                    string
	mean                      float64
	summaryOK                 bool
}

// checkRun reads a finished run's plan, shards and summary and reports
// duplicates, losses and whether the summary equals the shards' sum.
func checkRun(ctx context.Context, t *testing.T, store *s3blob.Store, runID string) runCheck {
	t.Helper()
	var plan runs.Plan
	if err := blob.GetJSON(ctx, store, runs.PlanKey(runID), &plan); err != nil {
		t.Fatalf("realstack: run %s: %v", runID, err)
	}
	var s aggregate.Summary
	if err := blob.GetJSON(ctx, store, runs.SummaryKey(runID), &s); err != nil {
		t.Fatalf("realstack: run %s has no summary (not completed): %v", runID, err)
	}
	seen := make([]int, plan.Samples)
	var sum aggregate.Summary
	var rc runCheck
	rows := 0
	for i := range plan.Shards {
		part, err := pq.ReadAll[schemas.ResultRow](ctx, store, runs.ShardKey(runID, i))
		if err != nil {
			t.Fatalf("realstack: run %s shard %d: %v", runID, i, err)
		}
		for _, r := range part {
			if r.SampleIndex < 0 || r.SampleIndex >= plan.Samples {
				t.Fatalf("realstack: run %s: sample index %d out of range", runID, r.SampleIndex)
			}
			seen[r.SampleIndex]++
			sum.Calls += int64(r.Calls)
			sum.PromptTokens += r.PromptTokens
			sum.CompletionTokens += r.CompletionTokens
			sum.CostUSD += r.CostUSD
			if r.ErrorClass != "" {
				rc.failed++
			}
			if r.ErrorClass == schemas.ErrorClassInfrastructure {
				t.Errorf("realstack: run %s sample %s: %s: %s", runID, r.SampleID, r.ErrorClass, r.ErrorMessage)
			}
		}
		rows += len(part)
	}
	rc.samples, rc.rows = int(plan.Samples), rows
	if len(s.Metrics) > 0 {
		rc.metric, rc.mean = s.Metrics[0].Name, s.Metrics[0].Mean
	}
	for _, n := range seen {
		rc.dups += max(n-1, 0)
		if n == 0 {
			rc.lost++
		}
	}
	if rc.dups > 0 || rc.lost > 0 {
		t.Errorf("realstack: run %s: %d duplicate and %d lost results over %d samples", runID, rc.dups, rc.lost, plan.Samples)
	}
	rc.summaryOK = s.Samples == int64(rows) && s.Calls == sum.Calls && s.PromptTokens == sum.PromptTokens &&
		s.CompletionTokens == sum.CompletionTokens && math.Abs(s.CostUSD-sum.CostUSD) <= 1e-9*math.Max(1, math.Abs(s.CostUSD))
	if !rc.summaryOK {
		t.Errorf("realstack: run %s: summary %d samples, %d calls, %d+%d tokens, $%v; the shards hold %d, %d, %d+%d, $%v", runID,
			s.Samples, s.Calls, s.PromptTokens, s.CompletionTokens, s.CostUSD, rows, sum.Calls, sum.PromptTokens, sum.CompletionTokens, sum.CostUSD)
	}
	return rc
}

// readKey reads one object whole.
func readKey(ctx context.Context, store *s3blob.Store, key string) ([]byte, error) {
	rc, err := store.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}
