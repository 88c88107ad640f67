package wfclient_test

import (
	"bytes"
	"context"
	"github.com/benchline/benchline/internal/wfclient"
	"strings"
	"testing"

	"github.com/benchline/benchline/internal/aggregate"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/schemas"
)

// summaryOf writes rows as the single result shard of a run and
// aggregates it as the Aggregate activity does.
func summaryOf(t *testing.T, rows []schemas.ResultRow) aggregate.Summary {
	t.Helper()
	ctx := context.Background()
	store := blobtest.NewMemory()
	plan := runs.Plan{RunID: "r1", Dataset: "toy", DatasetVersion: "v1", Model: "corp/m", Metrics: []string{"accuracy"}, Shards: 1, Samples: int64(len(rows))}
	w := pq.NewWriter[schemas.ResultRow](ctx, store, runs.ShardKey(plan.RunID, 0), pq.Options{})
	if err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := aggregate.Compute(ctx, store, plan, aggregate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func row(i int64, category, errClass string, metrics map[string]float64, calls int32, prompt, completion int64) schemas.ResultRow {
	return schemas.ResultRow{RunID: "r1", SampleIndex: i, Category: category, Model: "corp/m", Metrics: metrics,
		ErrorClass: errClass, Calls: calls, PromptTokens: prompt, CompletionTokens: completion}
}

// TestPrintSummaryNoSamples checks that a metric with no scored sample
// prints as such, never as a mean of 0 with CI [0, 0] (finding 7).
func TestPrintSummaryNoSamples(t *testing.T) {
	s := summaryOf(t, []schemas.ResultRow{
		row(0, "a", schemas.ErrorClassInfrastructure, nil, 0, 0, 0),
		row(1, "a", schemas.ErrorClassInfrastructure, nil, 0, 0, 0),
	})
	var out bytes.Buffer
	wfclient.PrintSummary(&out, s)
	text := out.String()
	rows := 0
	for _, line := range strings.Split(text, "\n") {
		if !strings.Contains(line, "accuracy") {
			continue
		}
		rows++
		if strings.Contains(line, "0.0000") || strings.Contains(line, "[0") || !strings.Contains(line, "no samples") {
			t.Errorf("a metric with N=0 printed as %q, want \"no samples\" and no numbers", line)
		}
	}
	if rows == 0 {
		t.Errorf("no metric row in:\n%s", text)
	}
}

// TestPrintSummaryUnknownUsage checks that calls whose provider reported
// no token usage are said to be unknown, not shown as 0 tokens and $0
// without a hint (finding 9).
func TestPrintSummaryUnknownUsage(t *testing.T) {
	ok := map[string]float64{"accuracy": 1}
	cases := []struct {
		name    string
		rows    []schemas.ResultRow
		unknown int64
		hint    string
	}{
		{"every call without usage", []schemas.ResultRow{row(0, "a", "", ok, 1, 0, 0), row(1, "a", "", ok, 2, 0, 0)}, 2, "unknown for 2 of 2 samples"},
		{"some calls without usage", []schemas.ResultRow{row(0, "a", "", ok, 1, 12, 3), row(1, "a", "", ok, 1, 0, 0)}, 1, "unknown for 1 of 2 samples"},
		{"every call with usage", []schemas.ResultRow{row(0, "a", "", ok, 1, 12, 3), row(1, "a", "", ok, 1, 9, 2)}, 0, ""},
		{"no call at all", []schemas.ResultRow{row(0, "a", schemas.ErrorClassInfrastructure, nil, 0, 0, 0)}, 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := summaryOf(t, tc.rows)
			if s.UsageUnknown != tc.unknown {
				t.Errorf("UsageUnknown = %d, want %d", s.UsageUnknown, tc.unknown)
			}
			var out bytes.Buffer
			wfclient.PrintSummary(&out, s)
			if tc.hint != "" && !strings.Contains(out.String(), tc.hint) {
				t.Errorf("no %q in:\n%s", tc.hint, out.String())
			}
			if tc.hint == "" && strings.Contains(out.String(), "unknown") {
				t.Errorf("usage said unknown when it was not:\n%s", out.String())
			}
		})
	}
}

// TestPrintSummaryClusters checks that a summary whose intervals are
// clustered says so, with the number of clusters, and one that is not
// does not.
func TestPrintSummaryClusters(t *testing.T) {
	s := summaryOf(t, []schemas.ResultRow{
		row(0, "a", "", map[string]float64{"accuracy": 1}, 1, 1, 1),
		row(1, "b", "", map[string]float64{"accuracy": 0}, 1, 1, 1),
	})
	var out bytes.Buffer
	wfclient.PrintSummary(&out, s)
	if strings.Contains(out.String(), "clustered") {
		t.Errorf("unclustered summary says clustered:\n%s", out.String())
	}
	s.Metrics[0] = aggregate.ClusterStat("accuracy", []float64{1, 1, 0, 0, 1, 0}, []string{"x", "x", "y", "y", "z", "z"}, aggregate.Options{})
	out.Reset()
	wfclient.PrintSummary(&out, s)
	if want := "intervals and standard errors are clustered (cluster-bootstrap; accuracy: 6 samples in 3 clusters)"; !strings.Contains(out.String(), want) {
		t.Errorf("want %q in:\n%s", want, out.String())
	}
}
