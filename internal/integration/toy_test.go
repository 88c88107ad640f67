package integration

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/app"
	"github.com/benchline/benchline/internal/benchmark"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/registry"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/scorers"
)

// The toy benchmark lives only in this test: a table declared with its row
// type, a builder, a task and one registration value, each following
// docs/ADDING_A_BENCHMARK.md. TestToyBenchmarkNeedsOnlyTheList proves that
// adding it to the list is all the rest of benchline needs (and
// internal/registry's TestSeventhBenchmark that a benchmark written in its
// own folders builds with one line added to the list).

// toyRow is the toy's table row: a sum to compute.
type toyRow struct {
	ID     string `parquet:"id"`
	A      int64  `parquet:"a"`
	B      int64  `parquet:"b"`
	Answer string `parquet:"answer"`
}

// toyTable is declared with its row type, so readers check a part's
// columns (schemas.Columns).
var toyTable = schemas.Declare[toyRow]("toy_row", 1)

// toyBuilder generates `rows` sums (param, default 30) in one part.
type toyBuilder struct{}

func (toyBuilder) Name() string          { return "toy" }
func (toyBuilder) Version() string       { return "1" }
func (toyBuilder) Schema() schemas.Table { return toyTable }

func (b toyBuilder) Plan(_ context.Context, _ datasets.Env, req datasets.Request) (datasets.Plan, error) {
	n, err := strconv.ParseInt(cmpOr(req.Params["rows"], "30"), 10, 64)
	if err != nil || n <= 0 {
		return datasets.Plan{}, &datasets.InputError{File: "build parameters", Msg: "rows: want a positive integer"}
	}
	params := map[string]string{"rows": fmt.Sprint(n)}
	return datasets.NewPlan(b, nil, params, []datasets.Part{{Index: 0, Label: "sums", Rows: n}}), nil
}

func (toyBuilder) WritePart(ctx context.Context, env datasets.Env, plan datasets.Plan, p datasets.Part, key string, progress func(int64)) (pq.FileInfo, error) {
	rows := make([]toyRow, p.Rows)
	for i := range rows {
		a, b := int64(i*7%13), int64(i*5%11)
		rows[i] = toyRow{ID: fmt.Sprintf("toy-%03d", i), A: a, B: b, Answer: fmt.Sprint(a + b)}
	}
	return datasets.WriteRows(ctx, env, key, rows, nil, progress)
}

func (toyBuilder) Card(m catalog.Manifest) string {
	return datasets.RenderCard(datasets.CardText{PrettyName: "toy sums", Description: "A test-only benchmark."}, m)
}

// toyTask asks for each sum and checks it exactly.
type toyTask struct{}

func (toyTask) Dataset() string   { return "toy" }
func (toyTask) Version() string   { return "1" }
func (toyTask) Metrics() []string { return []string{"exact"} }

func (toyTask) ReadSamples(ctx context.Context, store blob.Store, key string, start, n int64, fn func(scorers.Sample) error) error {
	return scorers.ReadRows(ctx, store, key, start, n, func(r *toyRow) string { return r.ID }, func(*toyRow) string { return "sums" }, fn)
}

func toyMessages(r *toyRow) []openai.ChatCompletionMessage {
	return []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: fmt.Sprintf("%s: what is %d + %d? Reply with the number only.", r.ID, r.A, r.B)}}
}

func (toyTask) Evaluate(ctx context.Context, env scorers.Env, s scorers.Sample) (scorers.Outcome, error) {
	r, ok := s.Row.(*toyRow)
	if !ok {
		return scorers.Outcome{}, fmt.Errorf("toy: sample %s: row %T: %w", s.ID, s.Row, scorers.ErrBadSample)
	}
	return scorers.AskExact(ctx, env, toyMessages(r), r.Answer, "exact")
}

func (toyTask) Reference(s scorers.Sample) (scorers.Reference, bool) {
	r, ok := s.Row.(*toyRow)
	if !ok {
		return scorers.Reference{}, false
	}
	return scorers.Reference{Messages: toyMessages(r), Content: r.Answer}, true
}

// toyBenchmark is the toy's one registration value.
var toyBenchmark = benchmark.Benchmark{
	Builder:     toyBuilder{},
	Description: "toy sums (test only)",
	NewTask:     func(benchmark.Deps) scorers.Task { return toyTask{} },
	Demo:        &benchmark.Demo{Models: []string{"baseline/reference", "baseline/noisy-0.5"}},
}

func cmpOr(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// TestToyBenchmarkNeedsOnlyTheList adds the toy to the registered list and
// runs it through the same path as every registered benchmark, on workers
// of a task queue of its own started with that list.
func TestToyBenchmarkNeedsOnlyTheList(t *testing.T) {
	reg, err := registry.Default().With(toyBenchmark)
	if err != nil {
		t.Fatal(err)
	}
	cfg := stack.Stack.Config
	cfg.Temporal.TaskQueue = "toy-benchmark"
	ws, err := app.NewWorkers(stack.Client, cfg, stack.Store, stack.Gateway, app.WorkerOptions{Queues: []string{"main"}, Benchmarks: reg})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
	}
	checkBenchmark(t, cfg, reg, toyBenchmark)
}
