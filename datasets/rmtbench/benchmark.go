package rmtbench

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
	scorer "github.com/benchline/benchline/scorers/rmtbench"
)

// DemoJudges are the judges of the demo and the end-to-end test: a panel
// of three baseline judges (the task's rule, one that breaks a tenth of
// its replies, and a lenient one that gives every dimension 5, which the
// panel's median outvotes and the agreement exposes), and a simulated user
// that ends a dialogue after five turns, so that the six-turn simulated
// dialogues end early.
var DemoJudges = map[string]string{
	scorer.RoleJudge: "baseline/judge,baseline/judge-malformed-0.1,baseline/judge-yes",
	scorer.RoleUser:  "baseline/user-5",
}

// Benchmark registers the RMTBench-style role-play dialogues.
var Benchmark = benchmark.Benchmark{
	Builder:     Builder{},
	Description: "RMTBench-style role-play dialogues: a model in character over fixed or simulated user turns (EN/ZH), judged per round on five dimensions",
	NewTask:     func(benchmark.Deps) scorers.Task { return scorer.Task{} },
	Demo: &benchmark.Demo{
		Models: []string{"baseline/persona", "baseline/assistant"},
		Judges: DemoJudges,
		Note: "models: baseline/persona stays in character (the fixtures' reference replies, else the persona's voice), " +
			"baseline/assistant breaks character; judges: a panel of baseline/judge (the task's rule), " +
			"baseline/judge-malformed-0.1 and baseline/judge-yes (every score 5); simulated user: baseline/user-5 " +
			"(all deterministic baselines, not LLMs)",
		Describe: describeDialogues,
	},
	// One sample is one dialogue (its rounds are rolled up within it); a
	// character's dialogues share its persona, in both languages and
	// every scenario.
	Cluster:   scorer.CharacterOf,
	ClusterBy: "character (its dialogues in both languages and every scenario)",
}

// describeDialogues prints the dialogues per language and scenario, fixed
// and simulated.
func describeDialogues(ctx context.Context, env benchmark.DescribeEnv, m catalog.Manifest) error {
	type count struct{ fixed, simulated, turns int }
	by := map[[2]string]*count{}
	chars := map[string]bool{}
	for _, f := range m.Files {
		rows, err := pq.ReadAll[schemas.RMTBenchDialogue](ctx, env.Store, catalog.Dir(m.Name, m.Version)+f.Path)
		if err != nil {
			return fmt.Errorf("rmtbench: describe %s@%s: %w", m.Name, m.Version, err)
		}
		for _, r := range rows {
			k := [2]string{r.Language, r.Scenario}
			c := by[k]
			if c == nil {
				c = &count{}
				by[k] = c
			}
			if r.Mode == schemas.RMTModeFixed {
				c.fixed++
			} else {
				c.simulated++
			}
			c.turns += int(r.MaxTurns)
			chars[r.CharacterID] = true
		}
	}
	keys := make([][2]string, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i][0]+"\x00"+keys[i][1] < keys[j][0]+"\x00"+keys[j][1] })
	fmt.Fprintf(env.Out, "%d characters\n", len(chars))
	tw := tabwriter.NewWriter(env.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LANGUAGE\tSCENARIO\tFIXED\tSIMULATED\tUSER TURNS (AT MOST)")
	for _, k := range keys {
		c := by[k]
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\n", k[0], k[1], c.fixed, c.simulated, c.turns)
	}
	return tw.Flush()
}
