package wfclient

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/benchline/benchline/internal/aggregate"
	"github.com/benchline/benchline/workflows"
)

// ModelLabel names a model for people: baselines are labelled as such.
func ModelLabel(model string) string {
	switch {
	case strings.HasPrefix(model, "baseline/reward-"):
		return model + " (deterministic baseline reward model, not an LLM)"
	case strings.HasPrefix(model, "baseline/"):
		return model + " (deterministic baseline, not an LLM)"
	}
	return model
}

// PrintSummary writes a run's summary as tables.
func PrintSummary(w io.Writer, s aggregate.Summary) {
	fmt.Fprintf(w, "run %s: %s@%s, model %s\n", s.RunID, s.Dataset, s.DatasetVersion, ModelLabel(s.Model))
	fmt.Fprintf(w, "samples %d: scored %d (model failures %d), infrastructure failures %d (not scored)\n",
		s.Samples, s.Scored, s.ModelFailed, s.InfraFailed)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SCOPE\tMETRIC\tMEAN\t95% CI\tSTDERR\tN")
	row := func(scope string, m aggregate.MetricStat) {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\n", scope, m.Name, m.MeanText(), m.CIText(), m.StdErrText(), m.N)
	}
	for _, m := range s.Metrics {
		row("overall", m)
	}
	for _, c := range s.Categories {
		for _, m := range c.Metrics {
			row(c.Category, m)
		}
	}
	tw.Flush()
	if len(s.Metrics) > 0 && s.Metrics[0].Clusters > 1 {
		m := s.Metrics[0]
		fmt.Fprintf(w, "intervals and standard errors are clustered (%s; %s: %d samples in %d clusters)\n", m.CIMethod, m.Name, m.N, m.Clusters)
	}
	if len(s.ErrorsByClass) > 0 {
		classes := make([]string, 0, len(s.ErrorsByClass))
		for c := range s.ErrorsByClass {
			classes = append(classes, c)
		}
		sort.Strings(classes)
		var parts []string
		for _, c := range classes {
			parts = append(parts, fmt.Sprintf("%s=%d", c, s.ErrorsByClass[c]))
		}
		fmt.Fprintf(w, "errors: %s\n", strings.Join(parts, " "))
	}
	printAgreement(w, s.Agreement)
	cost := fmt.Sprintf("$%.4f", s.CostUSD)
	if s.Batch {
		cost += " at batch prices (batch mode)"
	}
	fmt.Fprintf(w, "calls %d (cache hits %d), tokens %d in / %d out, cost %s, latency p50 %.0f ms p90 %.0f ms p99 %.0f ms\n",
		s.Calls, s.CacheHits, s.PromptTokens, s.CompletionTokens, cost, s.LatencyMS.P50, s.LatencyMS.P90, s.LatencyMS.P99)
	if s.UsageUnknown > 0 {
		fmt.Fprintf(w, "tokens and cost unknown for %d of %d samples: the provider reported no usage (the figures above count only the others)\n",
			s.UsageUnknown, s.Samples)
	}
}

// ProgressLine renders a one-line progress bar of a running run (the
// samples of finished shards and those running shards have done so far,
// client.QueryProgress); a run that has ended gets no bar (runs show).
func ProgressLine(p workflows.Progress, now time.Time) string {
	const width = 30
	frac := 0.0
	if p.Samples > 0 {
		frac = float64(p.SamplesDone) / float64(p.Samples)
	}
	filled := int(frac * width)
	bar := strings.Repeat("=", filled) + strings.Repeat(" ", width-filled)
	rate, eta := 0.0, "?"
	if el := now.Sub(p.StartedAt).Seconds(); el > 0 && p.SamplesDone > 0 {
		rate = float64(p.SamplesDone) / el
		eta = (time.Duration(float64(p.Samples-p.SamplesDone)/rate) * time.Second).Round(time.Second).String()
	}
	shards := fmt.Sprintf("%d/%d", p.ShardsDone, p.Shards)
	if p.ShardsRunning > 0 {
		shards += fmt.Sprintf(" (%d running)", p.ShardsRunning)
	}
	line := fmt.Sprintf("[%s] %d/%d samples, shards %s, errors %d model / %d infra, %.1f/s, ETA %s, $%.4f",
		bar, p.SamplesDone, p.Samples, shards, p.ModelFailed, p.InfraFailed, rate, eta, p.CostUSD)
	if b := p.Batches; b.Submitted > 0 {
		line += fmt.Sprintf(", batches %d submitted / %d in progress / %d completed, requests %d/%d",
			b.Submitted, b.Running, b.Completed, b.RequestsDone, b.Requests)
	}
	return line
}
