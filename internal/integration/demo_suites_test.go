package integration

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/aggregate"
	"github.com/benchline/benchline/internal/devstack"
	"github.com/benchline/benchline/internal/leaderboard"
)

// TestDemoSuites runs the demo's step for the suites written for other
// tools on the test stack: the lm-evaluation-harness task, built on its
// Hugging Face-layout folder with --data as a user builds it, and the
// promptfoo config, built through promptfoo's path and judged by the
// baseline judge. Both are built, evaluated and on the board; the
// reference's worked answers score 1 on both filter pipelines, the noisy
// baseline less; on the promptfoo config, which has no reference answers,
// the echo model passes some tests (its llm-rubric among the graded
// assertions, no judge error) and the reference none.
func TestDemoSuites(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	var out bytes.Buffer
	var board leaderboard.Board
	sums, err := devstack.DemoSuites(ctx, &out, stack, t.TempDir(), &board, map[string]bool{})
	if err != nil {
		t.Fatalf("demo suites: %v\n%s", err, lastLines(out.String(), 40))
	}
	for _, want := range []string{"benchline dataset build --task ", "demo_shop_math.yaml --data benchline/demo-shop-math=", "promptfooconfig.yaml)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the demo does not print %q:\n%s", want, out.String())
		}
	}
	type entry struct {
		dataset string
		models  []string
		judged  bool
	}
	want := []entry{
		{"demo-shop-math", []string{"baseline/reference", "baseline/noisy-0.3"}, false},
		{"promptfooconfig", []string{"baseline/echo", "baseline/reference"}, true},
	}
	if len(board.Benchmarks) != len(want) {
		t.Fatalf("the board has %d benchmarks, want %d: %+v", len(board.Benchmarks), len(want), board.Benchmarks)
	}
	for i, w := range want {
		b := board.Benchmarks[i]
		if b.Dataset != w.dataset || !slices.Equal(b.Models, w.models) || (b.Judges["judge"] != "") != w.judged {
			t.Errorf("board benchmark %d: %+v, want %s with %v (judged %v)", i, b, w.dataset, w.models, w.judged)
		}
		for _, m := range w.models {
			if !slices.ContainsFunc(board.Models, func(bm leaderboard.Model) bool { return bm.Model == m }) {
				t.Errorf("the board's models %v lack %s", board.Models, m)
			}
		}
	}
	mean := func(ds, model, metric string) float64 {
		t.Helper()
		s, ok := sums[ds][model]
		if !ok {
			t.Fatalf("no run of %s on %s: %v", model, ds, sums)
		}
		if s.Scored != s.Samples || s.InfraFailed != 0 || s.ModelFailed != 0 {
			t.Errorf("%s on %s: scored %d of %d (infra %d, model %d)", model, ds, s.Scored, s.Samples, s.InfraFailed, s.ModelFailed)
		}
		i := slices.IndexFunc(s.Metrics, func(m aggregate.MetricStat) bool { return m.Name == metric })
		if i < 0 {
			t.Fatalf("%s on %s has no metric %s: %+v", model, ds, metric, s.Metrics)
		}
		return s.Metrics[i].Mean
	}
	if s := sums["demo-shop-math"]["baseline/reference"]; s.Samples != 20 {
		t.Errorf("demo-shop-math: %d samples, want the test split's 20", s.Samples)
	}
	for _, m := range []string{"exact_match,strict-match", "exact_match,flexible-extract"} {
		ref, noisy := mean("demo-shop-math", "baseline/reference", m), mean("demo-shop-math", "baseline/noisy-0.3", m)
		if ref != 1 || noisy >= 1 {
			t.Errorf("%s: reference %v (want 1), noisy-0.3 %v (want less)", m, ref, noisy)
		}
	}
	if s := sums["promptfooconfig"]["baseline/echo"]; s.Samples != 12 {
		t.Errorf("promptfooconfig: %d samples, want 2 prompts x 6 tests", s.Samples)
	}
	echo, ref := mean("promptfooconfig", "baseline/echo", "pass"), mean("promptfooconfig", "baseline/reference", "pass")
	if echo <= 0 || echo >= 1 || ref != 0 {
		t.Errorf("promptfooconfig pass: echo %v (want in (0, 1)), reference %v (want 0)", echo, ref)
	}
	if e := mean("promptfooconfig", "baseline/echo", "judge_error_rate"); e != 0 {
		t.Errorf("promptfooconfig: judge_error_rate %v for echo, want 0", e)
	}
	t.Logf("demo suites:\n%s", lastLines(out.String(), 60))
}
