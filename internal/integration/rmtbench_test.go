package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/wfclient"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/rmtbench"
	"github.com/benchline/benchline/internal/baseline"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/schemas"
	scorer "github.com/benchline/benchline/scorers/rmtbench"
	"github.com/benchline/benchline/workflows"
)

// rmtSource writes an rmtbench source of n simulated dialogues of turns
// turns each, alternating English and Chinese over the fixture characters,
// and returns its directory.
func rmtSource(t testing.TB, n, turns int) string {
	t.Helper()
	rc, err := rmtbench.Fixtures().Open(context.Background(), rmtbench.CharactersFile)
	if err != nil {
		t.Fatal(err)
	}
	var chars bytes.Buffer
	_, err = chars.ReadFrom(rc)
	rc.Close()
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{"keeper", "botanist", "teahouse", "detective", "captain", "fox", "oak", "ember"}
	var dl strings.Builder
	for i := range n {
		lang := []string{"en", "zh"}[i%2]
		line, err := json.Marshal(map[string]any{
			"id": fmt.Sprintf("long-%03d", i), "character": ids[(i/2)%len(ids)], "language": lang, "scenario": "user_preference",
			"motivation":  "The user wants to talk for a long while about the weather and remembers to mention two things about themself.",
			"topics":      []string{"the weather", "the sea", "old friends"},
			"preferences": []map[string]any{{"statement": "I hate the cold.", "keywords": []string{"cold"}}, {"statement": "I love rivers.", "keywords": []string{"rivers"}}},
			"max_turns":   turns,
		})
		if err != nil {
			t.Fatal(err)
		}
		dl.Write(line)
		dl.WriteString("\n")
	}
	dir := t.TempDir()
	for name, body := range map[string]string{rmtbench.CharactersFile: chars.String(), rmtbench.DialoguesFile: dl.String()} {
		if err := os.WriteFile(dir+"/"+name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// serveBaseline runs a baseline server of the test's own (so that its
// calls can be counted) until ctx ends, and returns it with its base URL.
func serveBaseline(ctx context.Context, t testing.TB, opts baseline.Options) (*baseline.Server, string) {
	t.Helper()
	srv, err := baseline.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ctx, ln) }()
	return srv, "http://" + ln.Addr().String() + "/v1"
}

// cacheEntries counts the answers in a shard's cache segment.
func cacheEntries(ctx context.Context, t testing.TB, runID string, shard int) int {
	t.Helper()
	infos, err := stack.Store.List(ctx, runs.CachePrefix(runID, shard)+"/part-")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, info := range infos {
		b, err := blob.GetBytes(ctx, stack.Store, info.Key)
		if err != nil {
			t.Fatal(err)
		}
		n += bytes.Count(b, []byte("\n"))
	}
	return n
}

// settledRequests reads the server's request count once two reads 100 ms
// apart agree: a request the killed worker wrote just before it died is
// counted before the bound is computed.
func settledRequests(srv *baseline.Server) int64 {
	last := srv.Stats().Requests
	for {
		time.Sleep(100 * time.Millisecond)
		now := srv.Stats().Requests
		if now == last {
			return now
		}
		last = now
	}
}

// TestRMTBenchDialogueSurvivesWorkerKill plays one simulated dialogue of
// 20 turns (60 calls: simulated user, model, judge per turn) on a worker
// process against a baseline server of the test's own with 100 ms of
// latency per call, SIGKILLs the worker mid-dialogue and starts another.
// The durability is the shard's response cache: the resumed attempt replays
// the dialogue from the first turn, and every answer the killed worker had
// flushed to the cache segment comes back from it, so only the rest is
// paid. The test counts the server's requests and checks:
//
//   - the resumed attempt paid exactly the calls the segment did not hold
//     (its calls minus its cache hits), and found every flushed answer;
//   - the calls paid twice are at most the answers the killed worker had
//     not flushed plus the one in flight: the segment flushes, at the next
//     answer, once its oldest pending answer is FlushInterval (1 s) old, and
//     the calls are sequential and take at least 100 ms each, so at most 10
//     answers are pending at any time; the bound asserted is 11.
func TestRMTBenchDialogueSurvivesWorkerKill(t *testing.T) {
	const turns, perTurn, latency = 20, 3, 100 * time.Millisecond
	const bound = int(time.Second/latency) + 1
	bin := buildBinary(t)
	res, err := buildVia(t, rmtbench.Name, datasets.Request{Source: rmtSource(t, 1, turns)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	srv, url := serveBaseline(ctx, t, baseline.Options{References: baseline.NewMemoryReferences(), Faults: baseline.Faults{Latency: latency}})
	const queue = "rmt-kill"
	w := startWorkerWithBaseline(t, bin, queue, url)
	cfg := stack.Stack.Config
	cfg.Temporal.TaskQueue = queue
	in := workflows.EvaluateModelInput{Request: runs.Request{Dataset: rmtbench.Name + "@" + res.Version, Model: "baseline/persona",
		Judges: map[string]string{scorer.RoleJudge: "baseline/judge", scorer.RoleUser: "baseline/user"}}, ShardHeartbeatTimeout: 5 * time.Second}
	run, plan, err := wfclient.StartEval(ctx, stack.Client, cfg, stack.Store, in)
	if err != nil {
		t.Fatal(err)
	}
	// Kill once about 40% of the dialogue's calls are answered.
	for srv.Stats().Answered < int64(turns*perTurn*2/5) {
		select {
		case <-ctx.Done():
			t.Fatal("the dialogue did not get going")
		case <-time.After(20 * time.Millisecond):
		}
	}
	if err := w.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("kill the worker: %v (it had ended: %v)", err, w.Wait())
	}
	_ = w.Wait()
	paidBefore := settledRequests(srv)
	flushed := cacheEntries(ctx, t, plan.RunID, 0)
	if flushed == 0 || paidBefore >= turns*perTurn {
		t.Fatalf("killed after %d calls with %d flushed: not mid-dialogue", paidBefore, flushed)
	}
	startWorkerWithBaseline(t, bin, queue, url)
	ev, err := wfclient.WaitEval(ctx, stack.Client, run, plan.RunID, time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	paidAfter := srv.Stats().Requests - paidBefore

	rows, err := pq.ReadAll[schemas.ResultRow](ctx, stack.Store, runs.ShardKey(plan.RunID, 0))
	if err != nil || len(rows) != 1 {
		t.Fatalf("%d result rows: %v", len(rows), err)
	}
	row := rows[0]
	var d scorer.Details
	if err := json.Unmarshal([]byte(row.DetailsJSON), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Rounds) != turns || d.Ended != scorer.EndedLimit || row.Metrics[scorer.MetricScore] != 1 || ev.Summary.Scored != 1 {
		t.Fatalf("dialogue: %d rounds, ended %q, metrics %v", len(d.Rounds), d.Ended, row.Metrics)
	}
	if row.Calls != turns*perTurn {
		t.Errorf("the resumed dialogue made %d calls, want %d", row.Calls, turns*perTurn)
	}
	if int64(row.Calls-row.CacheHits) != paidAfter || int(row.CacheHits) != flushed {
		t.Errorf("after the kill: paid %d, calls %d, cache hits %d, flushed before the kill %d", paidAfter, row.Calls, row.CacheHits, flushed)
	}
	repaid := int(paidBefore) - flushed
	if repaid < 0 || repaid > bound {
		t.Errorf("%d calls paid twice (paid %d before the kill, %d flushed); at most %d allowed", repaid, paidBefore, flushed, bound)
	}
	t.Logf("killed after %d of %d calls (%d flushed to the cache segment); the resumed worker paid %d and read %d from the cache: %d paid twice (bound %d)",
		paidBefore, turns*perTurn, flushed, paidAfter, row.CacheHits, repaid, bound)
}

// procCPU is a process's user and system CPU time, from /proc/<pid>/stat
// (clock ticks of 10 ms, the Linux default USER_HZ).
func procCPU(t testing.TB, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// Fields after the command name, which is in parentheses: utime and
	// stime are the 12th and 13th of them.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("/proc/%d/stat: %q", pid, b)
	}
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// BenchmarkRMTBenchThroughput evaluates 64 simulated dialogues of 20 turns
// (1,280 turns; per turn one simulated-user, one model and one judge call)
// with baseline/persona on a `benchline worker` process against a baseline
// server in the bench process, on the real stack, and reports turns/s (of
// the whole run: planning, shards, aggregation) and the worker's CPU per
// turn; bench-cpu-µs/turn is the bench process's, mostly the baseline
// server answering three calls a turn. Each iteration is a new run
// (another seed).
//
//	go test -count=1 -run '^$' -bench BenchmarkRMTBenchThroughput -benchtime 3x ./internal/integration/
func BenchmarkRMTBenchThroughput(b *testing.B) {
	const dialogues, turns = 64, 20
	bin := buildBinary(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	built, err := wfclient.BuildDataset(ctx, stack.Client, stack.Stack.Config, workflows.BuildDatasetInput{Dataset: rmtbench.Name,
		Request: datasets.Request{Source: rmtSource(b, dialogues, turns)}})
	if err != nil {
		b.Fatal(err)
	}
	_, url := serveBaseline(ctx, b, baseline.Options{References: baseline.NewMemoryReferences()})
	const queue = "rmt-bench"
	w := startWorkerWithBaseline(b, bin, queue, url)
	cfg := stack.Stack.Config
	cfg.Temporal.TaskQueue = queue
	var wall, cpu, self time.Duration
	var done int
	seed := int(time.Now().UnixNano() % 1_000_000)
	for i := 0; b.Loop(); i++ {
		s := seed + i
		in := workflows.EvaluateModelInput{Request: runs.Request{Dataset: rmtbench.Name + "@" + built.Version, Model: "baseline/persona",
			Judges: map[string]string{scorer.RoleJudge: "baseline/judge"}, Seed: &s, ShardSize: 8}}
		cpu0, self0, start := procCPU(b, w.Pid()), procCPU(b, os.Getpid()), time.Now()
		run, plan, err := wfclient.StartEval(ctx, stack.Client, cfg, stack.Store, in)
		if err != nil {
			b.Fatal(err)
		}
		ev, err := wfclient.WaitEval(ctx, stack.Client, run, plan.RunID, time.Hour, nil)
		if err != nil {
			b.Fatal(err)
		}
		wall += time.Since(start)
		cpu += procCPU(b, w.Pid()) - cpu0
		self += procCPU(b, os.Getpid()) - self0
		if ev.Summary.Scored != dialogues || ev.Summary.Calls != dialogues*turns*3 {
			b.Fatalf("run %s: scored %d, calls %d", plan.RunID, ev.Summary.Scored, ev.Summary.Calls)
		}
		done += dialogues * turns
	}
	b.ReportMetric(float64(done)/wall.Seconds(), "turns/s")
	b.ReportMetric(float64(cpu.Microseconds())/float64(done), "worker-cpu-µs/turn")
	b.ReportMetric(float64(self.Microseconds())/float64(done), "bench-cpu-µs/turn")
}

// TestRMTBenchDemoOnStack evaluates the fixtures on the real stack with the
// demo's judges (a panel with a lenient judge, and a simulated user that
// ends after five turns): the summary rolls the dimensions up per
// scenario and per language, reports the panel's agreement, and the
// out-of-character baseline scores below the in-character one.
func TestRMTBenchDemoOnStack(t *testing.T) {
	res, err := buildVia(t, rmtbench.Name, datasets.Request{Source: rmtbench.Embedded})
	if err != nil {
		t.Fatal(err)
	}
	eval := func(model string) workflows.EvaluateModelResult {
		t.Helper()
		out, err := evalVia(t, "", workflows.EvaluateModelInput{Request: runs.Request{Dataset: rmtbench.Name + "@" + res.Version,
			Model: model, Judges: rmtbench.DemoJudges}})
		if err != nil {
			t.Fatal(err)
		}
		if s := out.Summary; s.Scored != res.Rows || s.InfraFailed != 0 || len(s.Categories) != 5 {
			t.Fatalf("%s: scored %d of %d, %d categories", model, s.Scored, res.Rows, len(s.Categories))
		}
		return out
	}
	persona, ooc := eval("baseline/persona"), eval("baseline/assistant")
	for _, name := range []string{"score_en", "score_zh", "preference_memory_zh"} {
		if m := metric(persona.Summary, name); m.N == 0 {
			t.Errorf("persona: no %s in the summary", name)
		}
	}
	p, o := metric(persona.Summary, scorer.MetricScore), metric(ooc.Summary, scorer.MetricScore)
	if !(o.Mean < p.Mean-0.2) || metric(ooc.Summary, "character_consistency").Mean > 0.2 {
		t.Errorf("score: persona %.3f, assistant %.3f", p.Mean, o.Mean)
	}
	a := agreementOf(t, ooc.Summary, scorer.MetricScore)
	if a.Alpha == nil || !(*a.Alpha < 0.5) {
		t.Errorf("agreement of a panel with a lenient judge: %+v", a)
	}
	ended := metric(persona.Summary, scorer.MetricUserEnded)
	if ended.N != 16 || ended.Mean != 0.5 {
		t.Errorf("user_ended %+v: the eight six-turn simulated dialogues end after five turns", ended)
	}
	for _, ev := range []workflows.EvaluateModelResult{persona, ooc} {
		s := ev.Summary
		t.Logf("%s: score %.3f [%.3f, %.3f] (en %.3f, zh %.3f), consistency %.3f, emotion %.3f, intent %.3f, memory %.3f, safety %.3f, judge_error_rate %.3f, calls %d",
			s.Model, metric(s, "score").Mean, metric(s, "score").CILow, metric(s, "score").CIHigh, metric(s, "score_en").Mean, metric(s, "score_zh").Mean,
			metric(s, "character_consistency").Mean, metric(s, "emotional_expression").Mean, metric(s, "intent_fulfilment").Mean,
			metric(s, "preference_memory").Mean, metric(s, "safety_boundaries").Mean, metric(s, scorer.MetricJudgeErrorRate).Mean, s.Calls)
		for _, ag := range s.Agreement {
			alpha := "n/a"
			if ag.Alpha != nil {
				alpha = fmt.Sprintf("%.3f", *ag.Alpha)
			}
			t.Logf("  judges %v: alpha %s, unanimous on %d of %d", ag.Judges, alpha, ag.Unanimous, ag.Paired)
		}
	}
}
