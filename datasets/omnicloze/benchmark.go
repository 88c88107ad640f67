package omnicloze

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
	scorer "github.com/benchline/benchline/scorers/omnicloze"
)

// DemoWriter writes the demo's items from the fixtures' captions: the
// baseline judge, which answers with the deterministic cloze maker
// (MakeCloze), not an LLM.
const DemoWriter = "baseline/judge"

// DemoJudges are the judges of the demo and the end-to-end test: a panel
// of three baseline judges answering from the lexical filler's oracle, two
// of which break a share of their replies, so that judge errors are
// counted and outvoted.
var DemoJudges = map[string]string{
	scorer.RoleJudge: "baseline/judge,baseline/judge-malformed-0.1,baseline/judge-malformed-0.2",
}

// Benchmark registers the Omni-Cloze-style caption evaluation.
var Benchmark = benchmark.Benchmark{
	Builder:     Builder{},
	Description: "Omni-Cloze-style caption evaluation: a judge fills cloze blanks about audio, visual and audio-visual clips from a model's caption alone (accuracy, omission, hallucination)",
	NewTask:     func(d benchmark.Deps) scorers.Task { return scorer.NewTask(d.Store) },
	Demo: &benchmark.Demo{
		Params: map[string]string{"writer": DemoWriter},
		Models: []string{"baseline/reference", "baseline/noisy-0.3"},
		Judges: DemoJudges,
		Note: "writer: baseline/judge, a deterministic cloze maker over the fixtures' captions; judges: a panel of baseline/judge " +
			"(the lexical filler), baseline/judge-malformed-0.1 and baseline/judge-malformed-0.2 (all deterministic baselines, not LLMs)",
		Describe: describeItems,
	},
}

// describeItems prints the items per domain and media kind, and the
// validation's counts.
func describeItems(ctx context.Context, env benchmark.DescribeEnv, m catalog.Manifest) error {
	type key struct{ domain, kind string }
	by := map[key][2]int{} // items, blanks
	for _, f := range m.Files {
		rows, err := pq.ReadAll[schemas.OmniClozeItem](ctx, env.Store, catalog.Dir(m.Name, m.Version)+f.Path)
		if err != nil {
			return fmt.Errorf("omnicloze: describe %s@%s: %w", m.Name, m.Version, err)
		}
		for _, r := range rows {
			k := key{r.Domain, r.MediaKind}
			c := by[k]
			by[k] = [2]int{c[0] + 1, c[1] + int(r.NumBlanks)}
		}
	}
	keys := make([]key, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i].domain < keys[j].domain || keys[i].domain == keys[j].domain && keys[i].kind < keys[j].kind
	})
	tw := tabwriter.NewWriter(env.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DOMAIN\tMEDIA\tITEMS\tBLANKS")
	for _, k := range keys {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\n", k.domain, k.kind, by[k][0], by[k][1])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if m.Params["writer"] != "" {
		st := BuildStats{Rejected: map[string]int{}}
		for _, r := range RejectReasons {
			st.Rejected[r] = int(m.Stats[StatRejectedPrefix+r])
		}
		fmt.Fprintf(env.Out, "writer %s: %d captions, %d items kept, rejected: %s (%d hand-written items besides)\n",
			m.Params["writer"], m.Stats[StatCaptions], m.Stats[StatKept], st.rejections(), m.Stats[StatHandWritten])
	}
	return nil
}
