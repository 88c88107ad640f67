// Package reporteval builds the DeepResearch-ReportEval dataset
// (HKUDS/DeepResearch-Eval): the research topics of a topics file in the
// original's format ({category_str, topic} a line) and, optionally, the
// reports to score from a reports file ({topic, report} a line), one row
// per topic.
//
// The bundled fixtures (embedded://reporteval) are topics and reports
// written for benchline in the original's style, not the original's data;
// their readable sources are under testdata/src, and fixtures/topics.jsonl
// and fixtures/reports.jsonl are generated from them (go test
// ./datasets/reporteval -run TestFixturesUpToDate -update). The pages the
// fixture reports cite are under fixtures/sources and served by
// SourcesHandler.
package reporteval

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/source"
	"github.com/benchline/benchline/schemas"
	scorer "github.com/benchline/benchline/scorers/reporteval"
)

// Name is the dataset name.
const Name = "reporteval"

// builderVersion changes whenever the rows written for the same input change.
const builderVersion = "2"

// ParamReports is the build parameter that says what the reports file's
// reports are: ReportsScore (the default) or ReportsReference.
const ParamReports = "reports"

// The values of ParamReports.
const (
	// ReportsScore: a topic's report is the report the task scores
	// (column report); the model under test is not asked.
	ReportsScore = "score"
	// ReportsReference: a topic's report is a reference (column
	// reference): the model under test writes the report the task scores,
	// and baseline/reference answers with the reference.
	ReportsReference = "reference"
)

// parseParams validates a build's parameters and returns the normalized
// ones the version id is derived from: none for the default.
func parseParams(params map[string]string) (reference bool, norm map[string]string, err error) {
	for k, v := range params {
		if k != ParamReports {
			return false, nil, &datasets.InputError{File: "params", Msg: fmt.Sprintf("unknown parameter %q (have %s)", k, ParamReports)}
		}
		switch strings.TrimSpace(v) {
		case "", ReportsScore:
		case ReportsReference:
			reference = true
		default:
			return false, nil, &datasets.InputError{File: "params", Msg: fmt.Sprintf("%s=%q: want %s or %s", k, v, ReportsScore, ReportsReference)}
		}
	}
	if reference {
		norm = map[string]string{ParamReports: ReportsReference}
	}
	return reference, norm, nil
}

// Embedded is the source URI of the fixtures bundled in the binary.
const Embedded = "embedded://reporteval"

// PartRows is the most rows a part holds; parts follow the topics file's
// order.
const PartRows = 1000

// TopicsProbe and ReportsProbe are the file names tried, in order, at
// locations that cannot be listed (plain http URLs): benchline's, the
// original's file names, and the original's data/ folder as published
// (topic/high_quality_topics.jsonl, report/qwen-reports.jsonl).
var (
	TopicsProbe  = []string{"topics.jsonl", "high_quality_topics.jsonl", "topic/high_quality_topics.jsonl"}
	ReportsProbe = []string{"reports.jsonl", "qwen-reports.jsonl", "report/qwen-reports.jsonl"}
)

//go:embed fixtures
var fixtures embed.FS

// Fixtures returns the bundled fixture files as a source Location.
func Fixtures() source.Location { return datasets.EmbeddedFixtures(fixtures, "fixtures", Embedded) }

// Builder builds the reporteval dataset.
type Builder struct{}

var _ datasets.Builder = Builder{}

// Name returns the dataset name.
func (Builder) Name() string { return Name }

// Version returns the builder version.
func (Builder) Version() string { return builderVersion }

// Schema returns the table the builder writes.
func (Builder) Schema() schemas.Table { return schemas.ReportEvalTopicTable }

// Plan finds the topics file and the optional reports file, stages them,
// validates every line of both (each report must name a topic of the
// topics file by its exact text, once) and plans parts of at most
// PartRows rows in the topics file's order. With reports=reference the
// reports become the rows' references (ParamReports), a version of its
// own.
func (b Builder) Plan(ctx context.Context, env datasets.Env, req datasets.Request) (datasets.Plan, error) {
	reference, params, err := parseParams(req.Params)
	if err != nil {
		return datasets.Plan{}, err
	}
	loc, err := datasets.Locate(ctx, env, req.Source, Embedded, Fixtures)
	if err != nil {
		return datasets.Plan{}, err
	}
	topicsName, reportsName, err := discover(ctx, loc)
	if err != nil {
		return datasets.Plan{}, err
	}
	var in inputs
	if in.topics, err = datasets.Stage(ctx, env, loc, topicsName); err != nil {
		return datasets.Plan{}, err
	}
	sources := []catalog.Source{in.topics}
	if reportsName != "" {
		r, err := datasets.Stage(ctx, env, loc, reportsName)
		if err != nil {
			return datasets.Plan{}, err
		}
		in.reports = &r
		sources = append(sources, r)
	}
	// Validate now, before any part is written, so bad input never
	// leaves a partial version behind.
	rows, err := readRows(ctx, env, in, reference)
	if err != nil {
		return datasets.Plan{}, err
	}
	if len(rows) == 0 {
		return datasets.Plan{}, &datasets.InputError{File: in.topics.URI, Msg: "no topics"}
	}
	// Say how many topics have a report, so a build without one (a source
	// that is only the topics) says so.
	stats := map[string]int64{"topics": int64(len(rows)), "topics_with_report": 0}
	for _, r := range rows {
		if r.ReportFile != nil {
			stats["topics_with_report"]++
		}
	}
	shas := datasets.Inputs(sources)
	var parts []datasets.Part
	for start := 0; start < len(rows); start += PartRows {
		n := min(PartRows, len(rows)-start)
		parts = append(parts, datasets.Part{Index: len(parts), Label: fmt.Sprintf("topics-%05d", start),
			Inputs: shas, Start: int64(start), Rows: int64(n)})
	}
	plan := datasets.NewPlan(b, sources, params, parts)
	plan.Stats = stats
	return plan, nil
}

// isTopics and isReports classify a file name: a *topics*.jsonl or a
// *reports*.jsonl file at the top of the location, or any .jsonl file in
// the original's data/ subfolders (topic/, report/), as it publishes them.
func isTopics(name string) bool  { return isJSONL(name, "topics", "topic/") }
func isReports(name string) bool { return isJSONL(name, "reports", "report/") }

func isJSONL(name, word, folder string) bool {
	l := strings.ToLower(name)
	if !strings.HasSuffix(l, ".jsonl") {
		return false
	}
	if rest, ok := strings.CutPrefix(l, folder); ok {
		return !strings.Contains(rest, "/")
	}
	return !strings.Contains(l, "/") && strings.Contains(l, word)
}

// discover returns the location's topics file and its reports file ("" when
// there is none). A listable location must hold exactly one *topics*.jsonl
// and at most one *reports*.jsonl at its top or in the original's topic/
// and report/ subfolders (the upstream data/ folder); other files (the fixtures'
// source pages, the original's examples) are ignored. Elsewhere the names
// of TopicsProbe and ReportsProbe are tried.
func discover(ctx context.Context, loc source.Location) (topics, reports string, err error) {
	names, err := loc.List(ctx)
	if errors.Is(err, source.ErrNotListable) {
		return probe(ctx, loc)
	}
	if err != nil {
		return "", "", err
	}
	var ts, rs []string
	for _, n := range names {
		switch t, r := isTopics(n), isReports(n); {
		case t && r:
			return "", "", &datasets.InputError{File: loc.URI(n), Msg: "the name says both topics and reports; rename it"}
		case t:
			ts = append(ts, n)
		case r:
			rs = append(rs, n)
		}
	}
	sort.Strings(ts)
	sort.Strings(rs)
	switch {
	case len(ts) == 0:
		return "", "", &datasets.InputError{File: loc.URI(""), Msg: "no *topics*.jsonl file at the top or in topic/ (the original's data/ folder holds topic/high_quality_topics.jsonl)"}
	case len(ts) > 1:
		return "", "", &datasets.InputError{File: loc.URI(""), Msg: fmt.Sprintf("%d topics files (%s); keep one", len(ts), strings.Join(ts, ", "))}
	case len(rs) > 1:
		return "", "", &datasets.InputError{File: loc.URI(""), Msg: fmt.Sprintf("%d reports files (%s); keep at most one", len(rs), strings.Join(rs, ", "))}
	case len(rs) == 1:
		return ts[0], rs[0], nil
	}
	return ts[0], "", nil
}

// probe tries the probe names at a location that cannot be listed: the
// first topics file found, and the first reports file if there is one.
// Without a topics file the error says what the location answered (e.g.
// HTTP 404 for each name) and the URL.
func probe(ctx context.Context, loc source.Location) (topics, reports string, err error) {
	ts, err := source.Probe(ctx, loc, TopicsProbe)
	if err != nil {
		return "", "", err
	}
	rs, err := source.Probe(ctx, loc, ReportsProbe)
	switch {
	case errors.Is(err, source.ErrNotFound):
		return ts[0], "", nil
	case err != nil:
		return "", "", err
	}
	return ts[0], rs[0], nil
}

// inputs are a build's staged files.
type inputs struct {
	topics  catalog.Source
	reports *catalog.Source // nil without a reports file
}

// planInputs finds the staged files part p reads among the plan's sources.
func planInputs(plan datasets.Plan, p datasets.Part) (inputs, error) {
	srcs, err := datasets.PartSources(plan, p)
	if err != nil {
		return inputs{}, err
	}
	var in inputs
	for _, s := range srcs {
		if isReports(s.Name) {
			in.reports = &s
		} else {
			in.topics = s
		}
	}
	if in.topics.SHA256 == "" {
		return in, fmt.Errorf("reporteval: part %s: no topics file among its inputs", p.Label)
	}
	return in, nil
}

// WritePart writes the part's rows, recomputed from the staged files.
func (b Builder) WritePart(ctx context.Context, env datasets.Env, plan datasets.Plan, p datasets.Part, key string, progress func(int64)) (pq.FileInfo, error) {
	in, err := planInputs(plan, p)
	if err != nil {
		return pq.FileInfo{}, err
	}
	reference, _, err := parseParams(plan.Params)
	if err != nil {
		return pq.FileInfo{}, err
	}
	rows, err := readRows(ctx, env, in, reference)
	if err != nil {
		return pq.FileInfo{}, err
	}
	if p.Start < 0 || p.Start > int64(len(rows)) {
		return pq.FileInfo{}, fmt.Errorf("reporteval: part %s starts at row %d of %d", p.Label, p.Start, len(rows))
	}
	end := min(p.Start+p.Rows, int64(len(rows)))
	return datasets.WriteComputedPart(ctx, env, plan, p, key, rows[p.Start:end], progress)
}

// readRows reads the staged topics and reports into rows, in topic order;
// with reference the reports go to the rows' reference column instead of
// their report column.
func readRows(ctx context.Context, env datasets.Env, in inputs, reference bool) ([]schemas.ReportEvalTopic, error) {
	rc, err := datasets.OpenStaged(ctx, env, in.topics.SHA256)
	if err != nil {
		return nil, err
	}
	topics, err := ReadTopics(rc, in.topics.URI)
	rc.Close()
	if err != nil {
		return nil, err
	}
	var reports map[string]Report
	if in.reports != nil {
		rc, err := datasets.OpenStaged(ctx, env, in.reports.SHA256)
		if err != nil {
			return nil, err
		}
		reports, err = ReadReports(rc, in.reports.URI, topics, in.topics.URI)
		rc.Close()
		if err != nil {
			return nil, err
		}
	}
	rows := make([]schemas.ReportEvalTopic, len(topics))
	for i, t := range topics {
		rows[i] = schemas.ReportEvalTopic{ID: scorer.FileID(t.Topic), Category: t.Category, Topic: t.Topic,
			SourceFile: in.topics.URI, SourceLine: int32(t.Line)}
		if r, ok := reports[t.Topic]; ok {
			report, file, line := r.Report, in.reports.URI, int32(r.Line)
			rows[i].ReportFile, rows[i].ReportLine = &file, &line
			if reference {
				rows[i].Reference = &report
			} else {
				rows[i].Report = &report
			}
		}
	}
	return rows, nil
}

// A Report is one line of a reports file.
type Report struct {
	Topic  string
	Report string
	Line   int // 1-based
}

// ReadReports reads a reports file, one JSON object {"topic", "report"} a
// line (the original's qwen-reports.jsonl), from r; name is the file's name
// for errors. Every report must name one of topics by its exact text, at
// most once; topicsName names the topics file in errors. Blank lines are
// skipped and other fields ignored. A line that is not such an object, has
// an empty or missing field, is not UTF-8, is longer than
// scorer.MaxLineBytes, names no topic or repeats a topic is a
// *datasets.InputError naming the file and line. The result maps each
// topic with a report to it.
func ReadReports(r io.Reader, name string, topics []Topic, topicsName string) (map[string]Report, error) {
	known := make(map[string]bool, len(topics))
	for _, t := range topics {
		known[t.Topic] = true
	}
	out := map[string]Report{}
	err := datasets.EachLine(r, name, func(n int, raw []byte) error {
		bad := func(format string, args ...any) error {
			return &datasets.InputError{File: name, Line: n, Msg: fmt.Sprintf(format, args...)}
		}
		if len(raw) > scorer.MaxLineBytes {
			return bad("line longer than %d bytes", scorer.MaxLineBytes)
		}
		var l struct {
			Topic  *string `json:"topic"`
			Report *string `json:"report"`
		}
		if err := json.Unmarshal(raw, &l); err != nil {
			return bad("not a JSON object {topic, report}: %v", err)
		}
		switch {
		case l.Topic == nil || *l.Topic == "":
			return bad(`missing or empty string field "topic"`)
		case l.Report == nil || strings.TrimSpace(*l.Report) == "":
			return bad(`missing or empty string field "report"`)
		case !known[*l.Topic]:
			return bad("the topic %q matches no topic of %s (reports name their topic by its exact text)", abbrev(*l.Topic), topicsName)
		}
		if prev, dup := out[*l.Topic]; dup {
			return bad("a second report for the topic of line %d", prev.Line)
		}
		out[*l.Topic] = Report{Topic: *l.Topic, Report: *l.Report, Line: n}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reporteval: read reports: %w", err)
	}
	return out, nil
}

// abbrev shortens a topic for an error message.
func abbrev(s string) string {
	const limit = 80
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	return string([]rune(s)[:limit]) + "…"
}

// Card renders the dataset card.
func (Builder) Card(m catalog.Manifest) string {
	return datasets.RenderCard(datasets.CardText{
		PrettyName: "DeepResearch-ReportEval topics (benchline build)",
		Description: "DeepResearch-ReportEval research topics, one row per topic in the topics file's order, built by " +
			"benchline. Columns: id (the original's report id, the hex MD5 of the topic), category (the original's " +
			"category_str), topic, report (the Markdown report to score, from the build's reports file; null when the " +
			"build had none for the topic, and the model under test then writes one), reference (with reports=reference, " +
			"the reports file's report as a reference: the model under test writes the report scored, and " +
			"baseline/reference answers with this one), source_file and source_line (where the topic came from), " +
			"report_file and report_line (where the report or reference came from).\n\n" +
			"Reports are scored for quality, redundancy and factuality; see docs/benchmarks/reporteval.md. " +
			"`benchline score reporteval-sections` prints the sections redundancy pairs are drawn from.",
		Provenance: "DeepResearch-ReportEval is from HKUDS/DeepResearch-Eval (arXiv 2510.07861, MIT). The bundled demo " +
			"fixtures (embedded://reporteval) are topics and reports written for benchline in the original's format; " +
			"they are not the original's, and the sources they cite live under the reserved test domain " +
			"sources.benchline.test.",
	}, m)
}

var _ datasets.Noter = Builder{}

// Notes says, in the build's output, when some topics have a report and
// others do not: the task scores the reports given, and asks the model
// under test to write the others, so one run mixes the two. A build with
// every topic's report, or none (a topics-only source), says nothing.
func (Builder) Notes(stats map[string]int64) []string {
	topics, ok := stats["topics"]
	with, ok2 := stats["topics_with_report"]
	if !ok || !ok2 || with == 0 || with >= topics {
		return nil
	}
	return []string{fmt.Sprintf("WARNING: %s of %s topics have no report in the reports file: "+
		"an evaluation asks the model under test to write those and scores the given reports for the others "+
		"(stats topics and topics_with_report in dataset show)",
		catalog.Thousands(topics-with), catalog.Thousands(topics))}
}
