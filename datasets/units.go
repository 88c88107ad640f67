package datasets

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/benchline/benchline/internal/catalog"
)

// What Generators share: their parameters with the runtime settings, the
// calls of a unit in parallel, the seeds they send, and the sources Finish
// plans from.

// CallsInFlight bounds the model calls of one generation unit in flight at
// once; the gateway's per-provider limiter bounds what reaches each
// endpoint.
const CallsInFlight = 16

// Units splits items into generation units of at most perUnit items each,
// labelled "<id>/unit-NNNNN": id must identify everything that determines
// the units' calls (see GeneratedKey).
func Units(id string, items, perUnit int) []Part {
	var out []Part
	for start, u := 0, 0; start < items; start, u = start+perUnit, u+1 {
		n := min(perUnit, items-start)
		out = append(out, Part{Index: u, Label: fmt.Sprintf("%s/unit-%05d", id, u), Start: int64(start), Rows: int64(n)})
	}
	return out
}

// UnitOf returns the items of generation unit u of plan,
// items[u.Start:u.Start+u.Rows]; noun names the items in the error for a
// unit that does not fit them (the plan does not match its sources).
func UnitOf[T any](plan Plan, u Part, items []T, noun string) ([]T, error) {
	if u.Start < 0 || u.Rows < 0 || u.Start+u.Rows > int64(len(items)) {
		return nil, fmt.Errorf("%s: unit %d covers %s [%d, %d), the sources have %d", plan.Dataset, u.Index, noun, u.Start, u.Start+u.Rows, len(items))
	}
	return items[u.Start : u.Start+u.Rows], nil
}

// SaveLines saves lines as the output of generation unit u of plan: JSON,
// one line each, with HTML characters left as they are, staged as the
// source "<prefix>unit-NNNNN.jsonl" (SaveGenerated, with summary g). name
// names a line in the error when one does not encode.
func SaveLines[L any](ctx context.Context, env Env, plan Plan, u Part, prefix string, lines []L, name func(L) string, g Generated) (Generated, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for _, l := range lines {
		if err := enc.Encode(l); err != nil {
			return g, fmt.Errorf("%s: encode %s: %w", plan.Dataset, name(l), err)
		}
	}
	return SaveGenerated(ctx, env, plan.Dataset, u, fmt.Sprintf("%sunit-%05d.jsonl", prefix, u.Index), buf.Bytes(), g)
}

// AllParams returns the plan's parameters together with its runtime
// settings, for a Generator to parse both.
func (p Plan) AllParams() map[string]string {
	out := make(map[string]string, len(p.Params)+len(p.Runtime))
	for k, v := range p.Params {
		out[k] = v
	}
	for k, v := range p.Runtime {
		out[k] = v
	}
	return out
}

// EachCall runs call(ctx, i) for i in [0, n), at most CallsInFlight at
// once, reporting each one done through progress (the calls done so far).
// The first error stops the others (their context is cancelled) and is
// returned.
func EachCall(ctx context.Context, n int, progress func(done int64), call func(ctx context.Context, i int) error) error {
	var done atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(CallsInFlight)
	for i := range n {
		g.Go(func() error {
			if err := call(gctx, i); err != nil {
				return err
			}
			progress(done.Add(1))
			return nil
		})
	}
	return g.Wait()
}

// RequestSeed is a seed to send with model requests: 31 bits (every
// provider takes it), a hash of domain (what the seed is for) and values,
// so that builds and repeated samples differ where their values do.
func RequestSeed(domain string, values ...uint64) int {
	b := append([]byte(domain), 0)
	for _, v := range values {
		b = binary.BigEndian.AppendUint64(b, v)
	}
	sum := sha256.Sum256(b)
	return int(binary.BigEndian.Uint32(sum[:4]) >> 1)
}

// FinishSources returns the sources Finish plans from: plan's sources but
// those isGenerated names (outputs of an earlier Finish), followed by the
// output of every unit of plan.Generate, which must all be done.
func FinishSources(ctx context.Context, env Env, plan Plan, isGenerated func(name string) bool) ([]catalog.Source, error) {
	var out []catalog.Source
	for _, s := range plan.Sources {
		if !isGenerated(s.Name) {
			out = append(out, s)
		}
	}
	for _, u := range plan.Generate {
		g, ok, err := LoadGenerated(ctx, env.Store, plan.Dataset, u)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("%s: unit %d (%s) has not been generated", plan.Dataset, u.Index, u.Label)
		}
		out = append(out, g.Source)
	}
	return out, nil
}

// PlanUnits plans a generated build, the skeleton every Generator shares:
// the plan of b over srcs with params norm (the version id is derived now,
// before any model call), unitItems recorded as a runtime setting when it
// is not the builder's default (it does not change the version), and n
// items split into units of unitItems named by the generation id gid.
func PlanUnits(b Builder, srcs []catalog.Source, norm map[string]string, gid string, n, unitItems, defaultUnitItems int) Plan {
	plan := NewPlan(b, srcs, norm, nil)
	if unitItems != defaultUnitItems {
		plan.Runtime = map[string]string{"unit_items": fmt.Sprint(unitItems)}
	}
	plan.Generate = Units(gid, n, unitItems)
	return plan
}

// WriteUnit is the rest of a Generator's Generate: it makes the unit's n
// calls (EachCall; call returns the line of call i), counts each line into
// the unit's summary (count) and saves the lines (SaveLines, each named by
// name).
func WriteUnit[L any](ctx context.Context, env Env, plan Plan, u Part, prefix string, n int, progress func(done int64),
	call func(ctx context.Context, i int) (L, error), count func(l L, g *Generated), name func(L) string) (Generated, error) {
	lines := make([]L, n)
	err := EachCall(ctx, n, progress, func(ctx context.Context, i int) error {
		var err error
		lines[i], err = call(ctx, i)
		return err
	})
	if err != nil {
		return Generated{}, err
	}
	var gen Generated
	for _, l := range lines {
		count(l, &gen)
	}
	return SaveLines(ctx, env, plan, u, prefix, lines, name, gen)
}
