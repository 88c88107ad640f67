package reporteval

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/judge"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/scorers"
)

// Dataset is the dataset the task evaluates.
const Dataset = "reporteval"

// DefaultJudge judges a run that names no judge: the baseline judge,
// which answers with the task's oracles.
const DefaultJudge = "baseline/judge"

// JudgeConcurrency bounds the judge questions of one sample in flight at
// once (pairs, fact checks); the gateway's provider limits apply on top.
const JudgeConcurrency = 4

// The metrics. Quality and redundancy are on the original's 0–4 scale
// (redundancy: 4 is no repetition); the factuality shares are in [0, 1].
const (
	// MetricQuality is the headline: the panel's Overall_Score.
	MetricQuality           = "quality"
	MetricComprehensiveness = "comprehensiveness"
	MetricCoherence         = "coherence"
	MetricClarity           = "clarity"
	MetricInsightfulness    = "insightfulness"
	// MetricRedundancy is the original's repeat_score: the mean of the
	// judged pairs' scores.
	MetricRedundancy = "redundancy"
	// MetricFactuality is the share of judged checks fully supported;
	// MetricFactualityPartial and MetricFactualityContradicted the shares
	// labelled 0 and -1; MetricFactualityUnverifiable the share of all
	// checks whose source could not be had; MetricFactualityChecks the
	// number of checks. See FactualityTally.Metrics.
	MetricFactuality             = "factuality"
	MetricFactualityPartial      = "factuality_partial"
	MetricFactualityContradicted = "factuality_contradicted"
	MetricFactualityUnverifiable = "factuality_unverifiable"
	MetricFactualityChecks       = "factuality_checks"
	// MetricJudgeErrorRate is the share of judge answers (one per judge
	// and question, every part and role) that are judge errors.
	MetricJudgeErrorRate = "judge_error_rate"
)

// AsymSuffix ends the names of the asymmetric mode's factuality metrics
// (factuality_asym, factuality_partial_asym, …).
const AsymSuffix = "_asym"

// The sets of the panels' ratings stored with each result
// (judge.RatingsKey), all on the interval scale.
const (
	SetQuality        = "quality"
	SetRedundancy     = "redundancy"
	SetFactuality     = "factuality"
	SetFactualityAsym = "factuality_asym"
)

// ErrNoFetcher is returned (wrapped) when the task has no Fetcher: the
// worker provides none, an infrastructure failure, never a score.
var ErrNoFetcher = errors.New("reporteval: no web fetcher on this worker")

// Task evaluates DeepResearch-ReportEval: the report of each topic (the
// row's own, else one the model under test writes) is judged for quality
// (one call per judge), redundancy (pairs of sections) and factuality
// (cited sentences against their sources, and in the asymmetric mode the
// proposer's claims against them), by a judge or a panel. See
// docs/benchmarks/reporteval.md.
type Task struct {
	// Fetcher fetches cited sources; required by Evaluate.
	Fetcher Fetcher
	// MaxPairs bounds the section pairs judged per report; 0 means
	// DefaultMaxPairs (the original's 30).
	MaxPairs int
}

var _ scorers.ReferenceProvider = Task{}

// taskVersion changes whenever scoring or a prompt changes.
const taskVersion = "1"

// Dataset implements scorers.Task.
func (Task) Dataset() string { return Dataset }

func (t Task) maxPairs() int {
	if t.MaxPairs <= 0 {
		return DefaultMaxPairs
	}
	return t.MaxPairs
}

// Version is the task's version, with the pair bound when it is not the
// default, so that runs scored differently have different run ids.
func (t Task) Version() string {
	if t.maxPairs() == DefaultMaxPairs {
		return taskVersion
	}
	return taskVersion + "+pairs-" + strconv.Itoa(t.maxPairs())
}

// Metrics lists the metrics a scored sample may report, the headline
// first. A metric without a value for a report is absent from its row
// (no redundancy without candidate pairs, no factuality share without a
// judged check); the asymmetric mode's metrics (suffix AsymSuffix) are
// reported by runs with a proposer and a checker.
func (Task) Metrics() []string {
	return []string{MetricQuality, MetricComprehensiveness, MetricCoherence, MetricClarity, MetricInsightfulness,
		MetricRedundancy, MetricFactuality, MetricFactualityPartial, MetricFactualityContradicted,
		MetricFactualityUnverifiable, MetricFactualityChecks, MetricJudgeErrorRate}
}

// ReadSamples implements scorers.Task.
func (Task) ReadSamples(ctx context.Context, store blob.Store, key string, start, n int64, fn func(scorers.Sample) error) error {
	return scorers.ReadRows(ctx, store, key, start, n,
		func(r *schemas.ReportEvalTopic) string { return r.ID }, func(r *schemas.ReportEvalTopic) string { return r.Category }, fn)
}

// rowOf returns a sample's row; a row that breaks the schema wraps
// scorers.ErrBadSample.
func rowOf(s scorers.Sample) (*schemas.ReportEvalTopic, error) {
	r, ok := s.Row.(*schemas.ReportEvalTopic)
	if !ok {
		return nil, fmt.Errorf("reporteval: sample %s: row is %T: %w", s.ID, s.Row, scorers.ErrBadSample)
	}
	if r.Topic == "" {
		return nil, fmt.Errorf("reporteval: sample %s: no topic: %w", s.ID, scorers.ErrBadSample)
	}
	return r, nil
}

// Where the report judged came from (ReportInfo.Source).
const (
	// FromDataset: the row's report; the model under test was not asked.
	FromDataset = "dataset"
	// FromModel: written by the model under test (ReportPromptVersion).
	FromModel = "model"
)

// ReportInfo says what report was judged.
type ReportInfo struct {
	Source string `json:"source"`
	// PromptVersion is ReportPromptVersion when the model wrote it.
	PromptVersion string `json:"prompt_version,omitempty"`
	Bytes         int    `json:"bytes"`
}

// Details is what a result row stores (details_json): every judge call's
// audit record and every verdict, the sections and pairs drawn, and what
// each cited source fetched, so that a person can check any judged number.
type Details struct {
	// Ratings are the panels' labels, for the run's agreement
	// (judge.RatingsKey).
	Ratings    []judge.Ratings `json:"panel_ratings"`
	Roles      judge.Roles     `json:"roles"`
	Report     ReportInfo      `json:"report"`
	Quality    Quality         `json:"quality"`
	Redundancy Redundancy      `json:"redundancy"`
	Factuality Factuality      `json:"factuality"`
	// FactualityAsym is the information-asymmetric mode's, in runs with a
	// proposer and a checker.
	FactualityAsym *Factuality `json:"factuality_asym,omitempty"`
	// Sources are the cited sources fetched, by URL.
	Sources []Source `json:"sources"`
	// JudgeAnswers and JudgeErrors count the judge answers and the judge
	// errors among them (MetricJudgeErrorRate).
	JudgeAnswers int `json:"judge_answers"`
	JudgeErrors  int `json:"judge_errors"`
}

// Evaluate judges the sample's report (see Task).
func (t Task) Evaluate(ctx context.Context, env scorers.Env, s scorers.Sample) (scorers.Outcome, error) {
	row, err := rowOf(s)
	if err != nil {
		return scorers.Outcome{}, err
	}
	roles, err := judge.RolesOf(env.Judges, DefaultJudge)
	if err != nil {
		// No sample of the run can be judged: every row reports it, at
		// once and without retries, as not scored (as medrubric does).
		return scorers.Outcome{}, fmt.Errorf("reporteval: %w: %w", err, scorers.ErrBadSample)
	}
	if t.Fetcher == nil {
		return scorers.Outcome{}, fmt.Errorf("reporteval: sample %s: %w", s.ID, ErrNoFetcher)
	}
	out := scorers.Outcome{PromptHash: promptHash(row.Topic)}
	d := Details{Roles: roles}
	report := ""
	if row.Report != nil {
		report = *row.Report
		d.Report = ReportInfo{Source: FromDataset}
	} else {
		resp, err := env.Models.Complete(ctx, env.Request(ReportMessages(row.Topic), nil))
		if err != nil {
			return out, fmt.Errorf("reporteval: sample %s: report: %w", s.ID, err)
		}
		out.Usage.Add(resp.Usage)
		report = resp.Text()
		d.Report = ReportInfo{Source: FromModel, PromptVersion: ReportPromptVersion}
	}
	d.Report.Bytes = len(report)
	out.Response = report

	a := &asker{models: env.Models, seed: env.Seed, noCache: env.NoCache}
	src := newSources(t.Fetcher)
	if err := t.judge(ctx, a, roles, row, report, PairSeed(s.ID, env.Seed), src, &d); err != nil {
		return out, fmt.Errorf("reporteval: sample %s: %w", s.ID, err)
	}
	if err := a.deferred.Err(); err != nil {
		// A batch round: the judges' answers come with the next one.
		return out, fmt.Errorf("reporteval: sample %s: %w", s.ID, err)
	}
	d.Sources = src.records()
	d.JudgeAnswers, d.JudgeErrors = a.answers, a.errors
	out.Usage.Merge(a.usage)
	out.Metrics, d.Ratings = roll(d)
	out.Details = d
	return out, nil
}

// judge runs the three judgements, and the asymmetric mode when the run
// has it.
func (t Task) judge(ctx context.Context, a *asker, roles judge.Roles, row *schemas.ReportEvalTopic, report string, seed uint64, src *sources, d *Details) error {
	var err error
	if d.Quality, err = a.judgeQuality(ctx, roles.Judges, row.Topic, report); err != nil {
		return fmt.Errorf("quality: %w", err)
	}
	if d.Redundancy, err = a.judgeRedundancy(ctx, roles.Judges, report, seed, t.maxPairs()); err != nil {
		return fmt.Errorf("redundancy: %w", err)
	}
	if d.Factuality, err = a.factuality(ctx, roles.Judges, report, src); err != nil {
		return fmt.Errorf("factuality: %w", err)
	}
	if roles.Asymmetric() {
		asym, err := a.factualityAsym(ctx, roles, report, src)
		if err != nil {
			return fmt.Errorf("factuality (asymmetric): %w", err)
		}
		d.FactualityAsym = &asym
	}
	return nil
}

// roll turns the details into the sample's metrics and the panels'
// ratings.
func roll(d Details) (map[string]float64, []judge.Ratings) {
	m := map[string]float64{}
	for name, v := range d.Quality.Panel {
		m[name] = v
	}
	if d.Redundancy.Score != nil {
		m[MetricRedundancy] = *d.Redundancy.Score
	}
	for k, v := range d.Factuality.Summary.Metrics("") {
		m[k] = v
	}
	if d.JudgeAnswers > 0 {
		m[MetricJudgeErrorRate] = float64(d.JudgeErrors) / float64(d.JudgeAnswers)
	}
	pairs := make([][]string, 0, len(d.Redundancy.Pairs))
	for _, p := range d.Redundancy.Pairs {
		pairs = append(pairs, scoreLabels(p.Scores))
	}
	js := d.Roles.Judges
	ratings := []judge.Ratings{
		{Set: SetQuality, Judges: js, Items: d.Quality.ratings(), Scale: judge.ScaleInterval},
		{Set: SetRedundancy, Judges: js, Items: pairs, Scale: judge.ScaleInterval},
		{Set: SetFactuality, Judges: js, Items: factRatings(d.Factuality.Checks), Scale: judge.ScaleInterval},
	}
	if d.FactualityAsym != nil {
		if p := d.FactualityAsym.Proposer; p == nil || !p.Failed() {
			// Without the proposer's claims the mode has no result.
			for k, v := range d.FactualityAsym.Summary.Metrics(AsymSuffix) {
				m[k] = v
			}
		}
		ratings = append(ratings, judge.Ratings{Set: SetFactualityAsym, Judges: d.Roles.Checkers,
			Items: factRatings(d.FactualityAsym.Checks), Scale: judge.ScaleInterval})
	}
	return m, ratings
}

func promptHash(topic string) string {
	return scorers.PromptHash(ReportPromptVersion, topic)
}

// Reference implements scorers.ReferenceProvider: for a row that carries
// a reference report (a build with reports=reference), the report
// baseline/reference writes when asked with ReportMessages. Rows with a
// report to score, or with none, have no reference.
func (Task) Reference(s scorers.Sample) (scorers.Reference, bool) {
	r, err := rowOf(s)
	if err != nil || r.Reference == nil {
		return scorers.Reference{}, false
	}
	return scorers.Reference{Messages: ReportMessages(r.Topic), Content: *r.Reference}, true
}
