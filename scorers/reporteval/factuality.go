package reporteval

import (
	"context"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/internal/judge"
	"github.com/benchline/benchline/internal/webfetch"
)

// Fetcher fetches a cited source; *webfetch.Fetcher is one. Every way a
// fetch can fail is a Result status; the error is for a cancelled context
// and for the cache's store.
type Fetcher interface {
	Fetch(ctx context.Context, url string) (webfetch.Result, error)
}

// Panel labels of a fact check: the original's is_factual values.
const (
	LabelSupported    = "1"
	LabelPartial      = "0"
	LabelContradicted = "-1"
)

// FactTieLabel is the label a tied panel gives a check: "0", the
// original's "partially supported or uncertain", which is what a split
// panel is (see judge.Resolve).
const FactTieLabel = LabelPartial

// Why a check was not judged (Check.Unverifiable), besides the fetch
// statuses other than ok (not_found, timeout, unreachable, refused_private,
// …).
const (
	// NoURL: the claim cites a reference number the report's list gives
	// no URL for.
	NoURL = "no_url"
	// NoRef: a proposer's claim names no reference.
	NoRef = "no_ref"
)

// Source is what a report's check recorded of one cited source: how the
// fetch ended. The text is in the fetch cache (webfetch), not here.
type Source struct {
	URL        string          `json:"url"`
	Status     webfetch.Status `json:"status"`
	HTTPStatus int             `json:"http_status,omitempty"`
	FinalURL   string          `json:"final_url,omitempty"`
	Reason     string          `json:"reason,omitempty"`
	// Bytes is the length of the text fetched; the prompt shows at most
	// MaxSourceChars of it.
	Bytes     int       `json:"bytes,omitempty"`
	FetchedAt time.Time `json:"fetched_at"`
	Cached    bool      `json:"cached,omitempty"`
}

// ClaimRecord is one claim a factuality check covers.
type ClaimRecord struct {
	// Sentence is the cited sentence as the pattern matched it (symmetric
	// mode only).
	Sentence string `json:"sentence,omitempty"`
	// Text is what the judges checked: ClaimText of the sentence, or the
	// proposer's claim.
	Text string `json:"text"`
	Refs []int  `json:"refs"`
}

// Check is one claim against one of its sources.
type Check struct {
	Claim int    `json:"claim"` // index into the claims
	Ref   int    `json:"ref,omitempty"`
	URL   string `json:"url,omitempty"`
	// Unverifiable says why the claim was not checked against this source:
	// NoURL, NoRef, or the fetch's status. An unverifiable check is never
	// scored false; it counts only in the unverifiable share.
	Unverifiable string        `json:"unverifiable,omitempty"`
	Judges       []JudgeRecord `json:"judges,omitempty"`
	// Labels are the judges' is_factual labels ("" for a judge error).
	Labels []string `json:"labels,omitempty"`
	// Label is the panel's (judge.Resolve, FactTieLabel on a tie); "" when
	// unverifiable or when every judge failed.
	Label string `json:"label,omitempty"`
	Tie   bool   `json:"tie,omitempty"`
}

// Factuality is one mode's fact check of a report.
type Factuality struct {
	// Pattern is the citation pattern that found the cited sentences
	// (Citations), in the symmetric mode.
	Pattern string `json:"pattern,omitempty"`
	// Proposer is the proposer's record, in the asymmetric mode.
	Proposer *JudgeRecord    `json:"proposer,omitempty"`
	Claims   []ClaimRecord   `json:"claims"`
	Checks   []Check         `json:"checks"`
	Summary  FactualityTally `json:"summary"`
}

// FactualityTally counts a report's checks.
type FactualityTally struct {
	// Checks counts (claim, source) checks; Unverifiable those not judged
	// because the source could not be had; JudgeErrors those judged but
	// without a panel label; Judged the others, split into Supported,
	// Partial and Contradicted.
	Checks       int `json:"checks"`
	Unverifiable int `json:"unverifiable"`
	JudgeErrors  int `json:"judge_errors"`
	Judged       int `json:"judged"`
	Supported    int `json:"supported"`
	Partial      int `json:"partial"`
	Contradicted int `json:"contradicted"`
}

// Tally counts checks.
func Tally(checks []Check) FactualityTally {
	t := FactualityTally{Checks: len(checks)}
	for _, c := range checks {
		switch {
		case c.Unverifiable != "":
			t.Unverifiable++
		case c.Label == LabelSupported:
			t.Supported++
		case c.Label == LabelPartial:
			t.Partial++
		case c.Label == LabelContradicted:
			t.Contradicted++
		default:
			t.JudgeErrors++
		}
	}
	t.Judged = t.Supported + t.Partial + t.Contradicted
	return t
}

// Metrics are the report's factuality metrics, each name with suffix:
//
//   - factuality_checks: the number of checks;
//   - factuality_unverifiable: unverifiable checks over all checks (when
//     there are checks);
//   - factuality (supported), factuality_partial, factuality_contradicted:
//     shares of the judged checks (when some were judged). Unverifiable
//     checks and judge errors are left out of these, never counted as
//     unsupported.
func (t FactualityTally) Metrics(suffix string) map[string]float64 {
	m := map[string]float64{MetricFactualityChecks + suffix: float64(t.Checks)}
	if t.Checks > 0 {
		m[MetricFactualityUnverifiable+suffix] = float64(t.Unverifiable) / float64(t.Checks)
	}
	if t.Judged > 0 {
		n := float64(t.Judged)
		m[MetricFactuality+suffix] = float64(t.Supported) / n
		m[MetricFactualityPartial+suffix] = float64(t.Partial) / n
		m[MetricFactualityContradicted+suffix] = float64(t.Contradicted) / n
	}
	return m
}

// sources fetches each URL of a sample once and remembers the outcome.
type sources struct {
	f  Fetcher
	mu sync.Mutex
	by map[string]*fetched
}

type fetched struct {
	once sync.Once
	res  webfetch.Result
	err  error
}

func newSources(f Fetcher) *sources { return &sources{f: f, by: map[string]*fetched{}} }

func (s *sources) get(ctx context.Context, url string) (webfetch.Result, error) {
	s.mu.Lock()
	e := s.by[url]
	if e == nil {
		e = &fetched{}
		s.by[url] = e
	}
	s.mu.Unlock()
	e.once.Do(func() { e.res, e.err = s.f.Fetch(ctx, url) })
	return e.res, e.err
}

// records lists what was fetched, sorted by URL.
func (s *sources) records() []Source {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Source, 0, len(s.by))
	for url, e := range s.by {
		if e.err != nil {
			continue
		}
		r := e.res
		out = append(out, Source{URL: url, Status: r.Status, HTTPStatus: r.HTTPStatus, FinalURL: r.FinalURL, Reason: r.Reason,
			Bytes: len(r.Text), FetchedAt: r.FetchedAt, Cached: r.Cached})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].URL < out[j].URL })
	return out
}

// checksOf lays out the checks of claims: one per distinct URL of each
// claim's references, in the order cited; a reference without a URL is a
// NoURL check, a claim without references a NoRef check.
func checksOf(claims []ClaimRecord, refs map[int]string) []Check {
	var out []Check
	for i, c := range claims {
		if len(c.Refs) == 0 {
			out = append(out, Check{Claim: i, Unverifiable: NoRef})
			continue
		}
		var seen []string
		for _, n := range c.Refs {
			u, ok := refs[n]
			switch {
			case !ok:
				out = append(out, Check{Claim: i, Ref: n, Unverifiable: NoURL})
			case !slices.Contains(seen, u):
				seen = append(seen, u)
				out = append(out, Check{Claim: i, Ref: n, URL: u})
			}
		}
	}
	return out
}

// checkAll fetches every check's source and has the panel judge the
// claim against it, each judge asked with the fact oracle's reply over
// exactly the text it sees. prompt builds the messages from the source's
// text and the claim.
func (a *asker) checkAll(ctx context.Context, judges []string, version string, prompt func(source, claim string) []openai.ChatCompletionMessage,
	claims []ClaimRecord, checks []Check, src *sources) error {
	// Each call writes its own element only.
	return forEach(ctx, len(checks), JudgeConcurrency, func(ctx context.Context, i int) error {
		var err error
		checks[i], err = a.check(ctx, judges, version, prompt, claims[checks[i].Claim].Text, checks[i], src)
		return err
	})
}

func (a *asker) check(ctx context.Context, judges []string, version string, prompt func(source, claim string) []openai.ChatCompletionMessage,
	claim string, c Check, src *sources) (Check, error) {
	if c.Unverifiable != "" {
		return c, nil
	}
	res, err := src.get(ctx, c.URL)
	if err != nil {
		return c, err
	}
	if res.Status != webfetch.OK {
		c.Unverifiable = string(res.Status)
		return c, nil
	}
	text := CutSource(res.Text)
	oracle, err := json.Marshal(FactOracle(claim, text))
	if err != nil {
		return c, err
	}
	recs, replies, err := askPanel[FactReply](ctx, a, judges, question{version: version, msgs: prompt(text, claim), schema: FactSchema, oracle: string(oracle)})
	c.Judges = recs
	if err != nil {
		return c, err
	}
	c.Labels = make([]string, len(replies))
	for i, r := range replies {
		if r != nil {
			c.Labels[i] = r.Label()
		}
	}
	res2 := judge.Resolve(c.Labels, FactTieLabel)
	c.Label, c.Tie = res2.Label, res2.Tie
	return c, nil
}

// factuality is the symmetric mode: each cited sentence (Citations),
// checked by the judge panel against each of its sources.
func (a *asker) factuality(ctx context.Context, judges []string, report string, src *sources) (Factuality, error) {
	pattern, cited := Citations(report)
	f := Factuality{Pattern: pattern, Claims: []ClaimRecord{}}
	for _, c := range cited {
		f.Claims = append(f.Claims, ClaimRecord{Sentence: c.Sentence, Text: ClaimText(c.Sentence), Refs: c.Refs})
	}
	f.Checks = checksOf(f.Claims, References(report))
	err := a.checkAll(ctx, judges, FactPromptVersion, FactMessages, f.Claims, f.Checks, src)
	f.Summary = Tally(f.Checks)
	return f, err
}

// factualityAsym is the information-asymmetric mode: the proposer splits
// the report into atomic claims with their references; the checker panel
// checks each claim against each of its sources, seeing the claim and the
// source only, never the report or the sentence. When the proposer gives
// no usable reply, nothing is checked and the mode has no result but the
// proposer's record.
func (a *asker) factualityAsym(ctx context.Context, roles judge.Roles, report string, src *sources) (Factuality, error) {
	oracle, err := json.Marshal(ClaimsOracle(report))
	if err != nil {
		return Factuality{}, err
	}
	var proposed ProposedClaims
	rec, ok, err := a.ask(ctx, roles.Proposer, question{version: ProposerPromptVersion, msgs: ProposerMessages(report),
		schema: ClaimsSchema, oracle: string(oracle)}, &proposed)
	f := Factuality{Proposer: &rec, Claims: []ClaimRecord{}}
	if err != nil || !ok {
		return f, err
	}
	for _, c := range proposed.Claims {
		f.Claims = append(f.Claims, ClaimRecord{Text: strings.TrimSpace(c.Claim), Refs: c.Refs})
	}
	f.Checks = checksOf(f.Claims, References(report))
	err = a.checkAll(ctx, roles.Checkers, CheckerPromptVersion, CheckerMessages, f.Claims, f.Checks, src)
	f.Summary = Tally(f.Checks)
	return f, err
}

// factRatings are a mode's panel labels, one item per judged check.
func factRatings(checks []Check) [][]string {
	var items [][]string
	for _, c := range checks {
		if c.Labels != nil {
			items = append(items, c.Labels)
		}
	}
	return items
}
