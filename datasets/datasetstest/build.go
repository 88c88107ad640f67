// Package datasetstest holds helpers for testing dataset builders.
package datasetstest

import (
	"context"
	"testing"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/pq"
)

// Build plans req with b and writes every part into a fresh in-memory
// store, as the BuildDataset activities do, then reads each part back as
// rows of T. A part that fails to write, or writes another number of rows
// than planned, fails t; check, when set, sees each part's rows. The error
// is Plan's, for tests of bad input.
func Build[T any](t testing.TB, b datasets.Builder, req datasets.Request, check func(p datasets.Part, rows []T)) (datasets.Plan, []T, error) {
	t.Helper()
	ctx := context.Background()
	env := datasets.Env{Store: blobtest.NewMemory()}
	plan, err := b.Plan(ctx, env, req)
	if err != nil {
		return plan, nil, datasets.LocalizeError(err, req.Source)
	}
	if err := datasets.CheckNotEmpty(plan, req.Source); err != nil {
		return plan, nil, err
	}
	var all []T
	for _, p := range plan.Parts {
		key := catalog.PartKey(plan.Dataset, plan.Version, p.Index)
		info, err := b.WritePart(ctx, env, plan, p, key, func(int64) {})
		if err != nil {
			t.Fatal(err)
		}
		if info.Rows != p.Rows {
			t.Fatalf("part %s: wrote %d rows, planned %d", p.Label, info.Rows, p.Rows)
		}
		rows, err := pq.ReadAll[T](ctx, env.Store, key)
		if err != nil {
			t.Fatal(err)
		}
		if check != nil {
			check(p, rows)
		}
		all = append(all, rows...)
	}
	return plan, all, nil
}
