package toolpref

import (
	"context"
	"fmt"
	"sort"
	"text/tabwriter"

	"github.com/benchline/benchline/internal/benchmark"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/schemas"
)

// Benchmark registers ToolPref: pairwise preference data made by rule-based
// scoring of tool calls. It is built (to train reward models on), not
// evaluated.
var Benchmark = benchmark.Benchmark{
	Builder:     Builder{},
	Description: "ToolPref pairwise preference data: candidate tool calls ranked by the AST checker (built, not evaluated)",
	// The demo samples candidate replies live from two baseline models at
	// build time, next to the bundled example replies and synthetic ones.
	Demo: &benchmark.Demo{
		Params:   map[string]string{"candidates": "baseline/noisy-0.3@0.7x4,baseline/reference@0x1", "pairs": "16"},
		Note:     "sampling candidate replies live at build time from baseline/noisy-0.3 and baseline/reference (deterministic baselines, not LLMs)",
		Describe: describePairs,
	},
}

// describePairs prints how many pairs each (chosen, rejected) source pair
// has.
func describePairs(ctx context.Context, env benchmark.DescribeEnv, m catalog.Manifest) error {
	count := map[[2]string]int{}
	for _, f := range m.Files {
		rows, err := pq.ReadAll[schemas.ToolPrefPair](ctx, env.Store, catalog.Dir(m.Name, m.Version)+f.Path)
		if err != nil {
			return fmt.Errorf("toolpref: describe %s@%s: %w", m.Name, m.Version, err)
		}
		for _, row := range rows {
			count[[2]string{env.Label(row.ChosenSource), env.Label(row.RejectedSource)}]++
		}
	}
	keys := make([][2]string, 0, len(count))
	for k := range count {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i][0] != keys[j][0] {
			return keys[i][0] < keys[j][0]
		}
		return keys[i][1] < keys[j][1]
	})
	tw := tabwriter.NewWriter(env.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CHOSEN FROM\tREJECTED FROM\tPAIRS")
	for _, k := range keys {
		fmt.Fprintf(tw, "%s\t%s\t%d\n", k[0], k[1], count[k])
	}
	return tw.Flush()
}
