package medrubric

import (
	"context"
	"fmt"
	"sort"
	"text/tabwriter"

	"github.com/benchline/benchline/internal/benchmark"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/scorers"
	scorer "github.com/benchline/benchline/scorers/medrubric"
)

// DemoJudges are the judges of the demo and the end-to-end test: a panel
// of three baseline judges (the keyword-rule oracle, one that breaks a
// tenth of its replies, and one biased to "met", which the panel outvotes
// and the agreement figures expose), and the asymmetric mode with baseline
// proposer and checker, so that both modes show side by side.
var DemoJudges = map[string]string{
	scorer.RoleJudge:    "baseline/judge,baseline/judge-malformed-0.1,baseline/judge-yes",
	scorer.RoleProposer: "baseline/judge",
	scorer.RoleChecker:  "baseline/judge",
}

// Benchmark registers the QuarkMedBench-style medical rubrics.
var Benchmark = benchmark.Benchmark{
	Builder:     Builder{},
	Description: "QuarkMedBench-style medical rubrics: judged answers to queries and sessions (weights, circuit breaker, panels, a checker that cannot see the answer)",
	NewTask:     func(benchmark.Deps) scorers.Task { return scorer.Task{} },
	Demo: &benchmark.Demo{
		Models: []string{"baseline/reference", "baseline/noisy-0.3"},
		Judges: DemoJudges,
		Note: "judges: a panel of baseline/judge (the keyword rule), baseline/judge-malformed-0.1 and baseline/judge-yes " +
			"(biased to \"met\"); asymmetric mode: baseline/judge splits answers into claims, baseline/judge checks the " +
			"claims alone (all deterministic baselines, not LLMs)",
		Describe: describeItems,
	},
}

// describeItems prints the items, turns and rubrics of each domain.
func describeItems(ctx context.Context, env benchmark.DescribeEnv, m catalog.Manifest) error {
	type count struct{ items, sessions, turns, rubrics int }
	by := map[string]*count{}
	for _, f := range m.Files {
		rows, err := pq.ReadAll[schemas.MedRubricItem](ctx, env.Store, catalog.Dir(m.Name, m.Version)+f.Path)
		if err != nil {
			return fmt.Errorf("medrubric: describe %s@%s: %w", m.Name, m.Version, err)
		}
		for _, r := range rows {
			c := by[r.Domain]
			if c == nil {
				c = &count{}
				by[r.Domain] = c
			}
			c.items++
			if r.NumTurns > 1 {
				c.sessions++
			}
			c.turns += int(r.NumTurns)
			c.rubrics += int(r.NumRubrics)
		}
	}
	domains := make([]string, 0, len(by))
	for d := range by {
		domains = append(domains, d)
	}
	sort.Strings(domains)
	tw := tabwriter.NewWriter(env.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DOMAIN\tITEMS\tSESSIONS\tTURNS\tRUBRICS")
	for _, d := range domains {
		c := by[d]
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\n", d, c.items, c.sessions, c.turns, c.rubrics)
	}
	return tw.Flush()
}
