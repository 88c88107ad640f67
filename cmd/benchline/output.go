package main

import (
	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/workflows"
)

// The --json outputs use snake_case keys, like the files benchline writes.
// Types that are also Temporal payloads (workflow results in recorded
// histories) keep their Go field names there, so the commands print them
// through the output types below rather than tagging the payloads, which
// would stop old histories from decoding. TestJSONOutputsAreSnakeCase walks
// every type a command prints.

// buildReport is what `dataset build --json` prints.
type buildReport struct {
	Dataset     string           `json:"dataset"`
	Version     string           `json:"version"`
	Rows        int64            `json:"rows"`
	Files       int              `json:"files"`
	ManifestKey string           `json:"manifest_key"`
	Reused      bool             `json:"reused"`
	Generated   *generatedReport `json:"generated,omitempty"`
	Stats       map[string]int64 `json:"stats,omitempty"`
	Skipped     string           `json:"skipped,omitempty"` // datasets.SkipSummary of Stats
	Variant     bool             `json:"variant,omitempty"`
	Tag         string           `json:"tag,omitempty"`
	// Latest is what the build did to latest (absent for a variant).
	Latest *latestReport `json:"latest,omitempty"`
}

// latestReport is what a build or a publish did to latest: what it named
// before (absent: nothing) and after, and whether it moved back to a
// version built earlier or shrank (then Warning says so in words).
type latestReport struct {
	From      *catalog.Pointed `json:"from,omitempty"`
	To        *catalog.Pointed `json:"to"`
	Moved     bool             `json:"moved"`
	MovedBack bool             `json:"moved_back"`
	Shrank    bool             `json:"shrank"`
	Warning   string           `json:"warning,omitempty"`
}

// newLatestReport reports a move of the store's latest (warning: its
// Warning) or of a release's (release: its ReleaseWarning).
func newLatestReport(name string, m catalog.LatestMove, release bool) *latestReport {
	if !m.Touched() {
		return nil
	}
	warn := m.Warning(name)
	if release {
		warn = m.ReleaseWarning(name)
	}
	return &latestReport{From: m.From, To: m.To, Moved: m.Moved(), MovedBack: m.Back(), Shrank: m.Shrank(), Warning: warn}
}

// generatedReport sums a build's generation units (builders that call
// models).
type generatedReport struct {
	Units     int     `json:"units"`
	Outputs   int64   `json:"outputs"`
	Skipped   int64   `json:"skipped"`
	Calls     int64   `json:"calls"`
	CacheHits int64   `json:"cache_hits"`
	CostUSD   float64 `json:"cost_usd"`
}

func newBuildReport(r workflows.BuildDatasetResult) buildReport {
	out := buildReport{Dataset: r.Dataset, Version: r.Version, Rows: r.Rows, Files: r.Files, ManifestKey: r.ManifestKey,
		Reused: r.Reused, Stats: r.Stats, Skipped: datasets.SkipSummary(r.Stats), Variant: r.Variant, Tag: r.Tag,
		Latest: newLatestReport(r.Dataset, r.Latest, false)}
	if g := r.Generated; g.Units > 0 {
		out.Generated = &generatedReport{Units: g.Units, Outputs: g.Outputs, Skipped: g.Skipped, Calls: g.Calls,
			CacheHits: g.CacheHits, CostUSD: g.CostUSD}
	}
	return out
}
