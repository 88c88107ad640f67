// Package synthetic builds a generated dataset of any size. It has no
// sources: rows are a pure function of the parameters, so it measures the
// build pipeline (Parquet encoding, S3 upload, workflow fan-out) alone, and
// tests use it to make builds long enough to interrupt.
package synthetic

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/schemas"
)

// Name is the dataset name.
const Name = "synthetic"

// Params (all optional): rows [1000], part_rows [100000], seed [1], and
// delay_ms_per_10k (a pause every 10,000 rows, for tests that interrupt a build).
type Params struct {
	Rows          int64
	PartRows      int64
	Seed          uint64
	DelayPer10kMS int64
}

// ParseParams reads and validates Params from a build request.
func ParseParams(m map[string]string) (Params, error) {
	p := Params{Rows: 1000, PartRows: 100_000, Seed: 1}
	for k, v := range m {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return p, fmt.Errorf("synthetic: param %s=%q: want a non-negative integer", k, v)
		}
		switch k {
		case "rows":
			p.Rows = n
		case "part_rows":
			if n == 0 {
				return p, fmt.Errorf("synthetic: part_rows must be positive")
			}
			p.PartRows = n
		case "seed":
			p.Seed = uint64(n)
		case "delay_ms_per_10k":
			p.DelayPer10kMS = n
		default:
			return p, fmt.Errorf("synthetic: unknown param %q (rows, part_rows, seed, delay_ms_per_10k)", k)
		}
	}
	return p, nil
}

// Builder builds the synthetic dataset.
type Builder struct{}

var _ datasets.Builder = Builder{}

func (Builder) Name() string          { return Name }
func (Builder) Version() string       { return "1" }
func (Builder) Schema() schemas.Table { return schemas.SyntheticRowTable }

// Plan splits the rows into parts.
func (b Builder) Plan(ctx context.Context, env datasets.Env, req datasets.Request) (datasets.Plan, error) {
	p, err := ParseParams(req.Params)
	if err != nil {
		return datasets.Plan{}, &datasets.InputError{File: "build parameters", Msg: err.Error()}
	}
	var parts []datasets.Part
	for start, i := int64(0), 0; start < p.Rows; start, i = start+p.PartRows, i+1 {
		parts = append(parts, datasets.Part{Index: i, Label: fmt.Sprintf("rows %d-%d", start, min(start+p.PartRows, p.Rows)-1), Start: start, Rows: min(p.PartRows, p.Rows-start)})
	}
	// The delay does not change the rows, so it is not part of the version.
	params := map[string]string{"rows": fmt.Sprint(p.Rows), "part_rows": fmt.Sprint(p.PartRows), "seed": fmt.Sprint(p.Seed)}
	plan := datasets.NewPlan(b, nil, params, parts)
	if p.DelayPer10kMS > 0 {
		plan.Runtime = map[string]string{"delay_ms_per_10k": fmt.Sprint(p.DelayPer10kMS)}
	}
	return plan, nil
}

var categories = []string{"arithmetic", "retrieval", "coding", "dialogue", "safety"}
var words = strings.Fields("the model should answer each question about a table of values and explain which rows it used with a short justification in plain words")

// Row returns row i for a seed: a pure function, so a part rewritten after a
// crash is byte-identical.
func Row(seed uint64, i int64) schemas.SyntheticRow {
	r := rand.New(rand.NewPCG(seed, uint64(i)))
	var sb strings.Builder
	n := 30 + r.IntN(30)
	for w := range n {
		if w > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(words[r.IntN(len(words))])
	}
	return schemas.SyntheticRow{
		ID: fmt.Sprintf("syn-%09d", i), Index: i, Category: categories[r.IntN(len(categories))],
		Prompt: sb.String(), Reference: strconv.Itoa(r.IntN(1_000_000)), Weight: r.Float64(),
	}
}

// WritePart generates and writes one part.
func (b Builder) WritePart(ctx context.Context, env datasets.Env, plan datasets.Plan, part datasets.Part, key string, progress func(int64)) (pq.FileInfo, error) {
	p, err := ParseParams(plan.Params)
	if err != nil {
		return pq.FileInfo{}, err
	}
	delay := ParamsDelay(plan)
	w := pq.NewWriter[schemas.SyntheticRow](ctx, env.Store, key, pq.Options{})
	buf := make([]schemas.SyntheticRow, 0, 1000)
	for i := part.Start; i < part.Start+part.Rows; i++ {
		buf = append(buf, Row(p.Seed, i))
		if len(buf) == cap(buf) || i == part.Start+part.Rows-1 {
			if err := w.Write(buf); err != nil {
				w.Abort()
				return pq.FileInfo{}, err
			}
			buf = buf[:0]
			done := i - part.Start + 1
			progress(done)
			if delay > 0 && done%10_000 == 0 {
				select {
				case <-time.After(delay):
				case <-ctx.Done():
					w.Abort()
					return pq.FileInfo{}, ctx.Err()
				}
			}
		}
	}
	return w.Close()
}

// ParamsDelay is the per-10k-row pause a build asked for; it travels in the
// plan's Runtime settings, outside the version id.
func ParamsDelay(plan datasets.Plan) time.Duration {
	ms, _ := strconv.ParseInt(plan.Runtime["delay_ms_per_10k"], 10, 64)
	return time.Duration(ms) * time.Millisecond
}

// Card renders the dataset card.
func (Builder) Card(m catalog.Manifest) string {
	return datasets.RenderCard(datasets.CardText{
		PrettyName:  "benchline synthetic rows",
		Description: "Generated rows for measuring and testing benchline's pipelines (not a benchmark): each row asks for its reference number.",
	}, m)
}
