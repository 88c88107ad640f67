package reporteval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/gateway"
	"github.com/benchline/benchline/internal/golden"
	"github.com/benchline/benchline/internal/judge"
	"github.com/benchline/benchline/internal/modelapi"
	"github.com/benchline/benchline/internal/webfetch"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/scorers"
	"github.com/benchline/benchline/scorers/scorerstest"
)

// fake answers the model under test with a fixed report and each judge
// call with reply(model, request); it records every request.
type fake struct {
	scorerstest.Models
	report string
	reply  func(model string, req modelapi.Request) (string, error)
}

func (f *fake) Complete(_ context.Context, req modelapi.Request) (modelapi.Response, error) {
	f.Record(req)
	if req.Model == "test/model" {
		return scorerstest.Reply(f.report, nil)
	}
	return scorerstest.Reply(f.reply(req.Model, req))
}

// oracleJudge replies with the request's oracle: baseline/judge's behaviour.
func oracleJudge(_ string, req modelapi.Request) (string, error) { return req.Oracle, nil }

// webServer stands in for the web: a supported page, a contradicting
// page, a 404, a page that never answers, and a redirect to the cloud
// metadata address; it counts the requests per path.
type webServer struct {
	*httptest.Server
	mu   sync.Mutex
	hits map[string]int
}

func newWeb(t *testing.T) *webServer {
	t.Helper()
	w := &webServer{hits: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/bridge", func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(rw, "<html><body><h1>The Harbour Bridge</h1><p>The harbour bridge opened to traffic in March 1932 after eight years of construction.</p><script>x()</script></body></html>")
	})
	mux.HandleFunc("/tower", func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/markdown")
		fmt.Fprint(rw, "# The Tower\n\nThe tower was completed in 1889 for the world's fair and stands 330 metres tall.\n")
	})
	mux.HandleFunc("/missing", http.NotFound)
	mux.HandleFunc("/slow", func(rw http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // never answers: the fetcher's timeout decides
	})
	mux.HandleFunc("/metadata", func(rw http.ResponseWriter, r *http.Request) {
		http.Redirect(rw, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
	})
	w.Server = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.mu.Lock()
		w.hits[r.URL.Path]++
		w.mu.Unlock()
		mux.ServeHTTP(rw, r)
	}))
	t.Cleanup(w.Close)
	return w
}

func (w *webServer) count(path string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.hits[path]
}

// webReport cites each of the web server's pages, and a reference with no
// URL, in the [n] form; [1] is cited twice.
func webReport(base string) string {
	return `# Two Landmarks

Landmarks tell the story of their cities. This report looks at two of them and what their construction says about engineering in their time.

## The Bridge

The harbour bridge opened to traffic in March 1932 after eight years of construction [1]. The bridge took eight years to build [1].

## The Tower

The tower was completed in 1925 and stands 330 metres tall [2]. Its designers published a history of the project [3].

## Access

Visitor numbers are published every year [4]. Maintenance plans are filed with the city [5]. Early photographs survive in an archive [6].

## References
[1],` + base + `/bridge
[2],` + base + `/tower
[3],` + base + `/missing
[4],` + base + `/slow
[5],` + base + `/metadata
[6],
`
}

// webTask is the task with a fetcher that may reach the test server on
// loopback, and times out quickly.
func webTask(t *testing.T) Task {
	t.Helper()
	f, err := webfetch.New(blobtest.NewMemory(), webfetch.Config{
		AllowNets: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
		Timeout:   300 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	return Task{Fetcher: f}
}

func sample(topic string, report *string) scorers.Sample {
	row := &schemas.ReportEvalTopic{ID: FileID(topic), Category: "Science & Technology", Topic: topic, Report: report}
	return scorers.Sample{ID: row.ID, Category: row.Category, Row: row}
}

func evaluate(t *testing.T, task Task, f *fake, s scorers.Sample, judges map[string]string) (scorers.Outcome, Details) {
	t.Helper()
	out, err := task.Evaluate(context.Background(), scorers.Env{Models: f, Model: "test/model", Judges: judges}, s)
	if err != nil {
		t.Fatal(err)
	}
	d, ok := out.Details.(Details)
	if !ok {
		t.Fatalf("details are %T", out.Details)
	}
	return out, d
}

// TestFactualityAgainstTheWeb checks the fact check against a local HTTP
// server standing in for the web: a supported and a contradicted claim
// are judged; a 404, a timeout, a redirect to a private address and a
// reference without a URL are recorded as unverifiable, never scored
// false; each source is fetched once (cached), and a second evaluation
// fetches nothing again.
func TestFactualityAgainstTheWeb(t *testing.T) {
	web := newWeb(t)
	task := webTask(t)
	report := webReport(web.URL)
	f := &fake{reply: oracleJudge}
	out, d := evaluate(t, task, f, sample("Two landmarks", &report), nil)

	wantChecks := map[int]string{1: "1", 2: "-1"} // ref → label
	wantUnverifiable := map[int]string{3: "not_found", 4: "timeout", 5: "refused_private", 6: NoURL}
	if len(d.Factuality.Checks) != 7 {
		t.Fatalf("%d checks, want 7: %+v", len(d.Factuality.Checks), d.Factuality.Checks)
	}
	for _, c := range d.Factuality.Checks {
		if want, ok := wantUnverifiable[c.Ref]; ok {
			if c.Unverifiable != want || c.Label != "" || c.Judges != nil {
				t.Errorf("[%d]: unverifiable %q label %q judged by %d; want %s, unjudged", c.Ref, c.Unverifiable, c.Label, len(c.Judges), want)
			}
			continue
		}
		if c.Label != wantChecks[c.Ref] || c.Unverifiable != "" {
			t.Errorf("[%d] %q: label %q, want %s", c.Ref, d.Factuality.Claims[c.Claim].Text, c.Label, wantChecks[c.Ref])
		}
	}
	want := map[string]float64{
		MetricFactuality: 2.0 / 3, MetricFactualityPartial: 0, MetricFactualityContradicted: 1.0 / 3,
		MetricFactualityUnverifiable: 4.0 / 7, MetricFactualityChecks: 7,
	}
	for k, v := range want {
		if got, ok := out.Metrics[k]; !ok || fmt.Sprintf("%.6f", got) != fmt.Sprintf("%.6f", v) {
			t.Errorf("%s = %v (%v), want %v", k, got, ok, v)
		}
	}
	byURL := map[string]Source{}
	for _, s := range d.Sources {
		byURL[strings.TrimPrefix(s.URL, web.URL)] = s
	}
	if s := byURL["/metadata"]; s.Status != webfetch.RefusedPrivate || !strings.Contains(s.FinalURL, "169.254.169.254") {
		t.Errorf("redirect to the metadata address: %+v", s)
	}
	if s := byURL["/bridge"]; s.Status != webfetch.OK || s.Bytes == 0 || s.Cached {
		t.Errorf("bridge: %+v", s)
	}
	// The judge saw the page as text (HTML reduced), not its script.
	for _, r := range f.Requests(DefaultJudge) {
		if strings.Contains(r.Messages[1].Content, "harbour bridge opened") && strings.Contains(r.Messages[1].Content, "x()") {
			t.Error("the fact checker's prompt holds the page's script")
		}
	}
	if web.count("/bridge") != 1 || web.count("/tower") != 1 {
		t.Errorf("fetched /bridge %d and /tower %d times, want once each", web.count("/bridge"), web.count("/tower"))
	}

	// Again: the pages come from the cache; the 404 too (definitive);
	// the timeout is tried again.
	_, d2 := evaluate(t, task, &fake{reply: oracleJudge}, sample("Two landmarks", &report), nil)
	if web.count("/bridge") != 1 || web.count("/missing") != 1 || web.count("/slow") != 2 {
		t.Errorf("second evaluation hit /bridge %d, /missing %d, /slow %d times", web.count("/bridge"), web.count("/missing"), web.count("/slow"))
	}
	for _, s := range d2.Sources {
		if strings.HasSuffix(s.URL, "/bridge") && !s.Cached {
			t.Errorf("bridge not from the cache: %+v", s)
		}
	}
}

// TestNoFetcher: a worker without a fetcher fails the sample as an
// infrastructure error, not a score.
func TestNoFetcher(t *testing.T) {
	report := "# R\n\nText."
	_, err := Task{}.Evaluate(context.Background(), scorers.Env{Models: &fake{reply: oracleJudge}, Model: "test/model"}, sample("t", &report))
	if !errors.Is(err, ErrNoFetcher) {
		t.Errorf("err = %v, want ErrNoFetcher", err)
	}
}

// TestGeneratesWithoutABundledReport: a row without a report asks the
// model under test with the report prompt, and judges its answer.
func TestGeneratesWithoutABundledReport(t *testing.T) {
	web := newWeb(t)
	f := &fake{report: webReport(web.URL), reply: oracleJudge}
	out, d := evaluate(t, webTask(t), f, sample("Two landmarks", nil), nil)
	model := f.Requests("test/model")
	if len(model) != 1 || model[0].Messages[1].Content != ReportMessages("Two landmarks")[1].Content {
		t.Fatalf("model asked %d times", len(model))
	}
	if d.Report.Source != FromModel || d.Report.PromptVersion != ReportPromptVersion || out.Response != f.report {
		t.Errorf("report info %+v", d.Report)
	}
	ref, ok := Task{}.Reference(sample("Two landmarks", nil))
	if ok {
		t.Errorf("a row without a reference has one: %+v", ref)
	}
}

// TestJudgeErrorsAreCountedNeverZero: replies that do not parse are asked
// again once, then recorded as judge errors: the figures they would have
// decided are absent, and the error rate says why.
func TestJudgeErrorsAreCountedNeverZero(t *testing.T) {
	report := strings.Repeat("Intro paragraph.\n\n", 4) + "## A\n" + strings.Repeat("alpha words here. ", 20) +
		"\n\n## B\n" + strings.Repeat("beta words here. ", 20) + "\n\n## C\n" + strings.Repeat("gamma words here. ", 20) +
		"\n\n## D\n" + strings.Repeat("delta words here. ", 20) + "\n\n## E\n" + strings.Repeat("epsilon words here. ", 20) +
		"\n\n## F\nend.\n"
	f := &fake{reply: func(string, modelapi.Request) (string, error) { return "I would rate it highly.", nil }}
	out, d := evaluate(t, webTask(t), f, sample("t", &report), nil)
	for _, k := range []string{MetricQuality, MetricRedundancy, MetricFactuality} {
		if v, ok := out.Metrics[k]; ok {
			t.Errorf("%s = %v from judge errors, want absent", k, v)
		}
	}
	if out.Metrics[MetricJudgeErrorRate] != 1 || d.JudgeAnswers == 0 || d.JudgeErrors != d.JudgeAnswers {
		t.Errorf("judge errors %d of %d, rate %v", d.JudgeErrors, d.JudgeAnswers, out.Metrics[MetricJudgeErrorRate])
	}
	if len(d.Redundancy.Pairs) == 0 || d.Redundancy.Score != nil {
		t.Fatalf("redundancy %+v", d.Redundancy)
	}
	v := d.Quality.Judges[0].Verdict
	if v.Attempts != 2 || v.Error == "" || v.Parsed != nil || v.PromptVersion != QualityPromptVersion {
		t.Errorf("quality verdict record %+v", v)
	}
}

// TestJudgeCallRefused: a judge call refused for its request (context too
// long) is a judge error of that judge; a failure of the judge itself is
// returned, for the engine to retry.
func TestJudgeCallRefused(t *testing.T) {
	report := "# R\n\nShort."
	long := &gateway.Error{Class: gateway.ClassContextLength, Model: DefaultJudge, Message: "too long"}
	out, d := evaluate(t, webTask(t), &fake{reply: func(string, modelapi.Request) (string, error) { return "", long }}, sample("t", &report), nil)
	if !strings.Contains(d.Quality.Judges[0].CallError, "too long") || out.Metrics[MetricJudgeErrorRate] != 1 {
		t.Errorf("quality record %+v, metrics %v", d.Quality.Judges[0], out.Metrics)
	}
	down := &gateway.Error{Class: gateway.ClassServer, Model: DefaultJudge, Message: "down"}
	_, err := webTask(t).Evaluate(context.Background(), scorers.Env{Models: &fake{reply: func(string, modelapi.Request) (string, error) { return "", down }},
		Model: "test/model"}, sample("t", &report))
	if !errors.As(err, new(*gateway.Error)) || gateway.IsModelFailure(err) {
		t.Errorf("err = %v, want the gateway's server error", err)
	}
}

// TestNoCandidatePairs: a report too short for the original's split has
// no redundancy score, not 0, and no pair is judged.
func TestNoCandidatePairs(t *testing.T) {
	report := "# R\n\nOne paragraph.\n\n## Only\nA section."
	f := &fake{reply: oracleJudge}
	out, d := evaluate(t, webTask(t), f, sample("t", &report), nil)
	if _, ok := out.Metrics[MetricRedundancy]; ok || !d.Redundancy.Skipped || len(d.Redundancy.Pairs) != 0 {
		t.Errorf("redundancy %+v, metrics %v", d.Redundancy, out.Metrics)
	}
	for _, r := range f.Requests() {
		if strings.Contains(r.Messages[0].Content, "repeat each other") {
			t.Error("a pair was judged")
		}
	}
}

// TestPanelsAndRatings: a panel's labels are stored per set for the run's
// agreement; a split fact check resolves to "0" (FactTieLabel).
func TestPanelsAndRatings(t *testing.T) {
	web := newWeb(t)
	report := webReport(web.URL)
	// judge b says every claim is contradicted; a follows the oracle.
	contra := func(model string, req modelapi.Request) (string, error) {
		if model == "b/judge" && strings.Contains(req.Oracle, "is_factual") {
			return `{"is_factual": -1, "sentence_support": ""}`, nil
		}
		return req.Oracle, nil
	}
	_, d := evaluate(t, webTask(t), &fake{reply: contra}, sample("Two landmarks", &report), map[string]string{"judge": "b/judge,a/judge"})
	if got := d.Roles.Judges; len(got) != 2 || got[0] != "a/judge" {
		t.Fatalf("panel %v", got)
	}
	for _, c := range d.Factuality.Checks {
		switch c.Ref {
		case 1: // a: 1, b: -1 → tie → 0
			if c.Label != "0" || !c.Tie || c.Labels[0] != "1" || c.Labels[1] != "-1" {
				t.Errorf("[1]: %+v", c)
			}
		case 2: // both -1
			if c.Label != "-1" || c.Tie {
				t.Errorf("[2]: %+v", c)
			}
		}
	}
	sets := map[string]judge.Ratings{}
	for _, r := range d.Ratings {
		sets[r.Set] = r
	}
	if q := sets[SetQuality]; len(q.Items) != 5 || q.Scale != judge.ScaleInterval || len(q.Items[0]) != 2 {
		t.Errorf("quality ratings %+v", q)
	}
	if fr := sets[SetFactuality]; len(fr.Items) != 3 {
		t.Errorf("factuality ratings %+v (one item per judged check)", fr)
	}
}

// TestAsymmetricCheckerNeverSeesTheReport: the proposer reads the report;
// each checker request holds one claim and its source's text, never the
// report or the sentence the claim came from; both modes show side by
// side.
func TestAsymmetricCheckerNeverSeesTheReport(t *testing.T) {
	web := newWeb(t)
	report := webReport(web.URL)
	// The proposer rewords the claims, so that a checker prompt holding a
	// report sentence would be caught.
	proposer := func(model string, req modelapi.Request) (string, error) {
		if model == "p/proposer" {
			return `{"claims": [{"claim": "The bridge was opened in 1932.", "refs": [1]}, {"claim": "The tower is 330 metres high.", "refs": [2]}, {"claim": "Photos exist.", "refs": []}]}`, nil
		}
		return req.Oracle, nil
	}
	f := &fake{reply: proposer}
	out, d := evaluate(t, webTask(t), f, sample("Two landmarks", &report),
		map[string]string{"judge": "a/judge", "proposer": "p/proposer", "checker": "c/checker"})
	checks := f.Requests("c/checker")
	if len(checks) != 2 {
		t.Fatalf("checker asked %d times, want 2", len(checks))
	}
	// What only the report says: its introduction, its sentences'
	// wording, its citation marks.
	reportOnly := []string{"Landmarks tell the story", "completed in 1925", "opened to traffic in March 1932 after", "[1]", "[2]"}
	for _, r := range checks {
		_, claim, ok := strings.Cut(r.Messages[1].Content, "## Claim")
		if !ok || !strings.Contains(r.Messages[1].Content, "## Web content") {
			t.Fatalf("checker prompt %q", r.Messages[1].Content)
		}
		for _, s := range reportOnly {
			if strings.Contains(claim, s) || strings.Contains(r.Messages[0].Content, s) {
				t.Errorf("checker prompt holds %q of the report", s)
			}
		}
	}
	a := d.FactualityAsym
	if a == nil || a.Proposer == nil || a.Proposer.Verdict.PromptVersion != ProposerPromptVersion || len(a.Claims) != 3 {
		t.Fatalf("asymmetric %+v", a)
	}
	// The reworded tower claim has the source's number: supported, where
	// the report's sentence (1925) is contradicted.
	if out.Metrics[MetricFactuality+AsymSuffix] != 1 || out.Metrics[MetricFactualityUnverifiable+AsymSuffix] != 1.0/3 {
		t.Errorf("asymmetric metrics %v", out.Metrics)
	}
	if out.Metrics[MetricFactualityContradicted] == 0 {
		t.Errorf("symmetric metrics %v", out.Metrics)
	}

	t.Run("a proposer that fails leaves the mode without a result", func(t *testing.T) {
		f := &fake{reply: func(model string, req modelapi.Request) (string, error) {
			if model == "p/proposer" {
				return "Claims: the bridge opened.", nil
			}
			return req.Oracle, nil
		}}
		out, d := evaluate(t, webTask(t), f, sample("Two landmarks", &report),
			map[string]string{"proposer": "p/proposer", "checker": "c/checker"})
		if _, ok := out.Metrics[MetricFactualityChecks+AsymSuffix]; ok || len(f.Requests("c/checker")) != 0 {
			t.Errorf("metrics %v after a failed proposer", out.Metrics)
		}
		if d.FactualityAsym == nil || !d.FactualityAsym.Proposer.Failed() {
			t.Errorf("proposer record %+v", d.FactualityAsym)
		}
	})
}

func TestBadSampleAndRoles(t *testing.T) {
	_, err := webTask(t).Evaluate(context.Background(), scorers.Env{Models: &fake{}}, scorers.Sample{ID: "x", Row: "not a row"})
	if !errors.Is(err, scorers.ErrBadSample) {
		t.Errorf("err = %v, want ErrBadSample", err)
	}
	report := "r"
	_, err = webTask(t).Evaluate(context.Background(), scorers.Env{Models: &fake{}, Judges: map[string]string{"checker": "c/1"}}, sample("t", &report))
	if !errors.Is(err, judge.ErrRoles) || !errors.Is(err, scorers.ErrBadSample) {
		t.Errorf("err = %v, want ErrRoles, reported as a bad sample (not scored, not retried)", err)
	}
}

func TestVersionAndReference(t *testing.T) {
	if (Task{}).Version() != "1" || (Task{MaxPairs: 10}).Version() == (Task{}).Version() {
		t.Errorf("versions %s, %s", Task{}.Version(), Task{MaxPairs: 10}.Version())
	}
	ref := "# The report"
	row := &schemas.ReportEvalTopic{ID: "x", Topic: "t", Reference: &ref}
	r, ok := Task{}.Reference(scorers.Sample{ID: "x", Row: row})
	if !ok || r.Content != ref || r.Messages[1].Content != ReportMessages("t")[1].Content {
		t.Errorf("reference %+v", r)
	}
	if a, b := PairSeed("x", nil), PairSeed("x", nil); a != b || a == PairSeed("y", nil) || a == PairSeed("x", new(int)) {
		t.Error("PairSeed is not a function of the id and the seed")
	}
}

// TestPromptsGolden pins every prompt's text: a change shows in review and
// must bump its version (go test -run TestPromptsGolden -update).
func TestPromptsGolden(t *testing.T) {
	var b strings.Builder
	show := func(version string, msgs []openai.ChatCompletionMessage) {
		fmt.Fprintf(&b, "==== %s\n", version)
		for _, m := range msgs {
			fmt.Fprintf(&b, "---- %s\n%s\n", m.Role, m.Content)
		}
	}
	show(ReportPromptVersion, ReportMessages("How do tides work?"))
	show(QualityPromptVersion, QualityMessages("How do tides work?", "# Tides\n\n## The Moon\nThe Moon pulls the oceans [1]."))
	show(RedundancyPromptVersion, RedundancyMessages("## A\nFirst passage.", "## B\nSecond passage."))
	show(FactPromptVersion, FactMessages("The Moon's gravity raises tides.", "The Moon pulls the oceans [1]."))
	show(ProposerPromptVersion, ProposerMessages("# Tides\n\nThe Moon pulls the oceans [1]."))
	show(CheckerPromptVersion, CheckerMessages("The Moon's gravity raises tides.", "The Moon pulls the oceans."))
	for _, s := range []*judge.Schema{QualitySchema, RedundancySchema, FactSchema, ClaimsSchema} {
		if !json.Valid(s.JSON) {
			t.Errorf("schema %s is not JSON", s.Name)
		}
	}
	path := filepath.Join("testdata", "prompts.golden")
	golden.Check(t, path, b.String(), *update, "prompts changed: bump their versions and run with -update")
	if !strings.Contains(CutSource(strings.Repeat("é", MaxSourceChars)), "cut at 60000 of 120000 bytes") {
		t.Error("CutSource does not say where it cut")
	}
}

// TestLargeSourceIsCut: a page over MaxSourceChars reaches the judge cut,
// and the oracle sees the same text as the judge.
func TestLargeSourceIsCut(t *testing.T) {
	page := "The bridge opened in 1932. " + strings.Repeat("Filler text about other things. ", 4000) + "It closed in 2001."
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, page)
	}))
	t.Cleanup(srv.Close)
	report := "# R\n\nThe bridge closed in 2001 [1].\n\n[1]," + srv.URL + "/p\n"
	f := &fake{reply: oracleJudge}
	_, d := evaluate(t, webTask(t), f, sample("t", &report), nil)
	c := d.Factuality.Checks[0]
	var reply FactReply
	if err := json.Unmarshal(c.Judges[0].Verdict.Parsed, &reply); err != nil || c.Label != "-1" {
		t.Errorf("the cut page no longer says 2001, so the claim is not supported: %+v (%v)", c, err)
	}
	for _, r := range f.Requests(DefaultJudge) {
		if strings.Contains(r.Messages[1].Content, "It closed in 2001") {
			t.Error("the judge saw the page past the cut")
		}
	}
	if hits.Load() != 1 {
		t.Errorf("%d fetches", hits.Load())
	}
}

// TestBatchRounds plays the task's batch rounds (scorerstest.Batch: each
// pass defers the requests not yet answered): the quality question, every
// pair and every fact check, for every judge of the panel, and the
// proposer, are asked in one round once the report is written, so the
// rounds do not grow with the questions or the panel: two (three with the
// checkers, who need the proposer's claims). The verdicts, replies,
// judge errors and scores are the interactive ones.
func TestBatchRounds(t *testing.T) {
	web := newWeb(t)
	// Sections long enough to be paired, then the cited web pages.
	var long strings.Builder
	for _, w := range []string{"alpha", "beta", "gamma", "delta", "epsilon"} {
		fmt.Fprintf(&long, "## %s\n\n%s\n\n", w, strings.Repeat(w+" words here. ", 20))
	}
	report := strings.Replace(webReport(web.URL), "## The Bridge", long.String()+"## The Bridge", 1)
	for _, tc := range []struct {
		name   string
		judges map[string]string
		want   int
	}{
		{"one judge", map[string]string{judge.RoleJudge: "j/a"}, 2},
		{"panel of three", map[string]string{judge.RoleJudge: "j/a,j/b,j/c"}, 2},
		{"asymmetric", map[string]string{judge.RoleJudge: "j/a,j/b", judge.RoleProposer: "j/p", judge.RoleChecker: "j/c,j/d"}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, s := context.Background(), sample("Two landmarks", nil)
			want, d := evaluate(t, webTask(t), &fake{report: report, reply: oracleJudge}, s, tc.judges)
			if len(d.Redundancy.Pairs) < 2 || d.Factuality.Summary.Judged < 2 || d.JudgeAnswers < 5*len(d.Roles.Judges) {
				t.Fatalf("%d pairs, %d checks judged, %d answers: want several", len(d.Redundancy.Pairs), d.Factuality.Summary.Judged, d.JudgeAnswers)
			}
			task := webTask(t)
			b := &scorerstest.Batch{Models: &fake{report: report, reply: oracleJudge}}
			got := scorerstest.CheckRounds(t, b, tc.want, func() (scorers.Outcome, error) {
				return task.Evaluate(ctx, scorers.Env{Models: b, Model: "test/model", Judges: tc.judges}, s)
			})
			// The sources were fetched in an earlier round (Cached, its
			// time): the same pages with the same outcome.
			gd, wd := got.Details.(Details), want.Details.(Details)
			if len(gd.Sources) != len(wd.Sources) {
				t.Fatalf("sources %+v, want %+v", gd.Sources, wd.Sources)
			}
			for i := range gd.Sources {
				if g, w := gd.Sources[i], wd.Sources[i]; g.URL != w.URL || g.Status != w.Status || g.Bytes != w.Bytes {
					t.Errorf("source %+v, want %+v", g, w)
				}
			}
			gd.Sources, wd.Sources = nil, nil
			got.Details, want.Details = gd, wd
			if !reflect.DeepEqual(got, want) {
				t.Errorf("batch outcome %+v\ninteractive %+v", got, want)
			}
		})
	}
}
