package reporteval_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/activities/activitiestest"
	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/datasetstest"
	"github.com/benchline/benchline/datasets/reporteval"
	"github.com/benchline/benchline/internal/baseline"
	"github.com/benchline/benchline/internal/benchmark"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/gateway"
	"github.com/benchline/benchline/internal/judge"
	"github.com/benchline/benchline/internal/modelapi"
	"github.com/benchline/benchline/internal/webfetch"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/scorers"
	scorer "github.com/benchline/benchline/scorers/reporteval"
)

// fixtureRun evaluates the fixture topics with the task as a run does,
// offline: a real gateway and baseline server (answering with the
// fixtures' reports as references) and a real fetcher whose
// sources.benchline.test is the fixtures' source server.
type fixtureRun struct {
	samples     []scorers.Sample
	task        scorers.Task
	env         scorers.Env
	sources     *httptest.Server
	baselineURL string
}

func newFixtureRun(t *testing.T, params map[string]string) *fixtureRun {
	t.Helper()
	_, rows, err := datasetstest.Build[schemas.ReportEvalTopic](t, reporteval.Builder{}, datasets.Request{Source: reporteval.Embedded, Params: params}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := &fixtureRun{}
	refs := baseline.NewMemoryReferences()
	for i := range rows {
		s := scorers.Sample{ID: rows[i].ID, Category: rows[i].Category, Row: &rows[i]}
		r.samples = append(r.samples, s)
		if ref, ok := (scorer.Task{}).Reference(s); ok {
			refs.Add(ref.Messages, baseline.Reference{Content: ref.Content})
		}
	}
	_, r.baselineURL = activitiestest.ServeBaseline(t, baseline.Options{References: refs})
	r.sources = httptest.NewServer(reporteval.SourcesHandler())
	t.Cleanup(r.sources.Close)
	f, err := webfetch.New(blobtest.NewMemory(), webfetch.Config{
		Resolve:    map[string]string{reporteval.SourcesHost: r.sources.Listener.Addr().String()},
		AllowHosts: []string{reporteval.SourcesHost},
	})
	if err != nil {
		t.Fatal(err)
	}
	r.task = reporteval.NewTask(benchmark.Deps{Web: f})
	cfg, err := gateway.LoadConfig(nil, gateway.WithBaselineURL(r.baselineURL, nil))
	if err != nil {
		t.Fatal(err)
	}
	g, err := gateway.New(gateway.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	r.env = scorers.Env{Models: g}
	return r
}

// result is one run over the fixtures.
type result struct {
	mean    map[string]float64 // each metric's mean over the samples that report it
	n       map[string]int
	agree   []judge.Agreement
	details []scorer.Details
	outs    []scorers.Outcome
}

func (r *fixtureRun) run(t *testing.T, model string, judges map[string]string) result {
	t.Helper()
	env := r.env
	env.Model, env.Judges = model, judges
	res := result{mean: map[string]float64{}, n: map[string]int{}}
	var ratings []judge.Ratings
	for _, s := range r.samples {
		out, err := r.task.Evaluate(context.Background(), env, s)
		if err != nil {
			t.Fatalf("%s: %v", s.ID, err)
		}
		for k, v := range out.Metrics {
			res.mean[k] += v
			res.n[k]++
		}
		d := out.Details.(scorer.Details)
		ratings = append(ratings, d.Ratings...)
		res.details = append(res.details, d)
		res.outs = append(res.outs, out)
	}
	for k := range res.mean {
		res.mean[k] /= float64(res.n[k])
	}
	res.agree = judge.RunAgreement(ratings)
	return res
}

// agreement returns a run's agreement of one set.
func (res result) agreement(t *testing.T, set string) judge.Agreement {
	t.Helper()
	for _, a := range res.agree {
		if a.Set == set {
			return a
		}
	}
	t.Fatalf("no agreement for %s in %+v", set, res.agree)
	return judge.Agreement{}
}

// TestTaskOnFixtures runs the task end to end on the 8 fixture topics with
// the baseline models and judges, and checks what the baselines are for.
func TestTaskOnFixtures(t *testing.T) {
	r := newFixtureRun(t, map[string]string{reporteval.ParamReports: reporteval.ReportsReference})
	ref := r.run(t, "baseline/reference", map[string]string{"judge": "baseline/judge"})
	for i, d := range ref.details {
		if d.Report.Source != scorer.FromModel || ref.outs[i].Response != *r.samples[i].Row.(*schemas.ReportEvalTopic).Reference {
			t.Errorf("sample %d: the reference model did not write the fixture's report (%+v)", i, d.Report)
		}
		if d.Factuality.Pattern != scorer.PatternSingle || d.Redundancy.Score == nil || len(d.Redundancy.Pairs) == 0 {
			t.Errorf("sample %d: pattern %q, redundancy %+v", i, d.Factuality.Pattern, d.Redundancy.Score)
		}
	}
	// The fact oracle finds exactly the four contradictions written into
	// the fixtures (testdata/contradicted.jsonl), and no source is
	// unverifiable.
	contradicted, checks := 0, 0
	for _, d := range ref.details {
		contradicted += d.Factuality.Summary.Contradicted
		checks += d.Factuality.Summary.Checks
		for _, s := range d.Sources {
			if s.Status != webfetch.OK {
				t.Errorf("source %s: %s", s.URL, s.Status)
			}
		}
	}
	if contradicted != 4 || checks != 100 || ref.mean[scorer.MetricFactualityUnverifiable] != 0 || ref.mean[scorer.MetricJudgeErrorRate] != 0 {
		t.Errorf("%d contradicted of %d checks; metrics %v", contradicted, checks, ref.mean)
	}
	if ref.n[scorer.MetricQuality] != 8 || ref.n[scorer.MetricRedundancy] != 8 || ref.n[scorer.MetricFactuality] != 8 {
		t.Errorf("metrics reported %v", ref.n)
	}
	t.Logf("reference, oracle judge: %v", ref.mean)

	t.Run("the noisy model scores below the reference", func(t *testing.T) {
		noisy := r.run(t, "baseline/noisy-0.3", map[string]string{"judge": "baseline/judge"})
		if !(noisy.mean[scorer.MetricQuality] < ref.mean[scorer.MetricQuality]) {
			t.Errorf("quality: noisy %.3f, reference %.3f", noisy.mean[scorer.MetricQuality], ref.mean[scorer.MetricQuality])
		}
		t.Logf("noisy-0.3: %v", noisy.mean)
	})

	t.Run("a biased judge is caught by the agreement", func(t *testing.T) {
		agree := r.run(t, "baseline/reference", map[string]string{"judge": "baseline/judge,baseline/judge-noisy-0"})
		yes := r.run(t, "baseline/reference", map[string]string{"judge": "baseline/judge,baseline/judge-yes"})
		for _, set := range []string{scorer.SetQuality, scorer.SetRedundancy, scorer.SetFactuality} {
			a, b := agree.agreement(t, set), yes.agreement(t, set)
			if a.Alpha == nil || *a.Alpha != 1 || a.Scale != judge.ScaleInterval {
				t.Errorf("%s: two judges that agree: %+v", set, a)
			}
			if b.Alpha == nil || !(*b.Alpha < 0.5) {
				t.Errorf("%s: with the biased judge: %+v", set, b)
			} else {
				t.Logf("%s: alpha with judge-yes %.3f", set, *b.Alpha)
			}
		}
		if !(yes.mean[scorer.MetricQuality] > ref.mean[scorer.MetricQuality]) {
			t.Errorf("judge-yes should inflate quality: %.3f vs %.3f", yes.mean[scorer.MetricQuality], ref.mean[scorer.MetricQuality])
		}
		t.Logf("judge + judge-yes: %v", yes.mean)
	})

	t.Run("both modes side by side", func(t *testing.T) {
		both := r.run(t, "baseline/reference", map[string]string{"judge": "baseline/judge", "proposer": "baseline/judge", "checker": "baseline/judge"})
		for _, k := range []string{scorer.MetricFactuality, scorer.MetricFactualityContradicted, scorer.MetricFactualityChecks} {
			if both.mean[k] != both.mean[k+scorer.AsymSuffix] || both.n[k+scorer.AsymSuffix] != 8 {
				t.Errorf("%s %.4f, asymmetric %.4f: the oracles over the same sentences should agree", k, both.mean[k], both.mean[k+scorer.AsymSuffix])
			}
		}
		if both.agreement(t, scorer.SetFactualityAsym).Samples != 8 {
			t.Errorf("agreement %+v", both.agree)
		}
	})
}

// TestTaskScoresBundledReports: a row that carries its report is scored
// as it is; the model under test is not asked.
func TestTaskScoresBundledReports(t *testing.T) {
	r := newFixtureRun(t, nil)
	res := r.run(t, "baseline/noisy-1", map[string]string{"judge": "baseline/judge"})
	for i, d := range res.details {
		row := r.samples[i].Row.(*schemas.ReportEvalTopic)
		if d.Report.Source != scorer.FromDataset || res.outs[i].Response != *row.Report {
			t.Errorf("sample %d: report from %s", i, d.Report.Source)
		}
		raw, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		rs, err := judge.RatingsOf(string(raw))
		if err != nil || len(rs) != 3 {
			t.Errorf("ratings in the stored details: %d, %v", len(rs), err)
		}
	}
}

// TestJudgeByURL judges through providers named in a providers file, as
// any OpenAI-compatible judge is reached: "byurl" points at the baseline
// server's URL and "stub" at a small server answering from the prompt
// alone. Neither receives an oracle (only the baseline provider does), so
// the baseline server behind "byurl" has none to answer from: every
// verdict is a judge error, counted and never a score; the stub's
// verdicts, read from its replies, score the reports.
func TestJudgeByURL(t *testing.T) {
	r := newFixtureRun(t, map[string]string{reporteval.ParamReports: reporteval.ReportsReference})
	var oracles atomic.Int32
	stub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Header.Get(modelapi.OracleHeader) != "" {
			oracles.Add(1)
		}
		var in openai.ChatCompletionRequest
		if err := json.NewDecoder(req.Body).Decode(&in); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		reply := `{"is_factual": 1, "sentence_support": "stated on the page"}`
		switch sys := in.Messages[0].Content; {
		case strings.Contains(sys, "grade the report"):
			reply = `{"Reason": "fine", "Comprehensiveness_Score": 2, "Coherence_Score": 3, "Clarity_Score": 2, "Insightfulness_Score": 2, "Overall_Score": 2}`
		case strings.Contains(sys, "repeat each other"):
			reply = `{"score": 3, "explanation": "little overlap", "repetitions_found": [], "confidence": "80%"}`
		}
		_ = json.NewEncoder(w).Encode(openai.ChatCompletionResponse{ID: "x", Object: "chat.completion", Model: in.Model,
			Choices: []openai.ChatCompletionChoice{{Message: openai.ChatCompletionMessage{Role: "assistant", Content: reply}, FinishReason: "stop"}}})
	}))
	t.Cleanup(stub.Close)
	baselineURL := r.baselineURL
	providers := fmt.Sprintf("providers:\n  byurl:\n    base_url: %s\n  stub:\n    base_url: %s/v1\n", baselineURL, stub.URL)
	cfg, err := gateway.LoadConfig(strings.NewReader(providers), gateway.WithBaselineURL(baselineURL, nil))
	if err != nil {
		t.Fatal(err)
	}
	g, err := gateway.New(gateway.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	r.env.Models = g

	byURL := r.run(t, "baseline/reference", map[string]string{"judge": "byurl/judge"})
	if byURL.mean[scorer.MetricJudgeErrorRate] != 1 || byURL.n[scorer.MetricQuality] != 0 || byURL.n[scorer.MetricFactuality] != 0 {
		t.Errorf("a judge without the oracle: %v", byURL.mean)
	}
	if v := byURL.details[0].Quality.Judges[0].Verdict; v.Judge != "byurl/judge" || !strings.Contains(v.Reply, "no oracle reply") || v.Attempts != 2 {
		t.Errorf("verdict record %+v", v)
	}

	stubbed := r.run(t, "baseline/reference", map[string]string{"judge": "stub/any-model"})
	want := map[string]float64{scorer.MetricQuality: 2, scorer.MetricCoherence: 3, scorer.MetricRedundancy: 3, scorer.MetricFactuality: 1, scorer.MetricJudgeErrorRate: 0}
	for k, v := range want {
		if stubbed.mean[k] != v || stubbed.n[k] != 8 {
			t.Errorf("%s = %v over %d, want %v over 8", k, stubbed.mean[k], stubbed.n[k], v)
		}
	}
	if oracles.Load() != 0 {
		t.Errorf("the stub received an oracle %d times", oracles.Load())
	}
}
