package datasets

import (
	"fmt"
	"sort"
	"strings"

	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/release"
)

// CardText is what a builder says about its dataset in the README dataset
// card; RenderCard adds the facts every card has.
type CardText struct {
	License     string // SPDX id for the front matter; empty leaves it out
	PrettyName  string
	Description string // Markdown paragraphs
	Provenance  string // where the data comes from, its license, what the fixtures are
}

// RenderCard renders a version's README.md: front matter that makes the
// layout read as a Hugging Face dataset, the builder's text, then the
// version's schema, builder version, rows, creation time, parameters, files
// with their hashes and sources.
func RenderCard(c CardText, m catalog.Manifest) string {
	var b strings.Builder
	head, err := release.MarshalFront(release.FrontMatter{License: c.License, PrettyName: c.PrettyName,
		Configs: []release.CardConfig{{ConfigName: "default", DataFiles: []release.DataFile{{Split: "test", Path: "data/*.parquet"}}}}})
	if err != nil { // a struct of strings always encodes; keep the card readable if not
		head = "---\npretty_name: benchline dataset\n---\n"
	}
	b.WriteString(head + "\n")
	fmt.Fprintf(&b, "# %s @ %s\n\n%s\n\n", m.Name, m.Version, strings.TrimSpace(c.Description))
	fmt.Fprintf(&b, "- schema: %s v%d\n- builder version: %s\n- rows: %d\n- created: %s\n",
		m.Schema.Name, m.Schema.Version, m.BuilderVersion, m.Rows, m.CreatedAt.UTC().Format("2006-01-02T15:04:05Z"))
	keys := make([]string, 0, len(m.Params))
	for k := range m.Params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "- param %s = %q\n", k, m.Params[k])
	}
	if skipped := SkipSummary(m.Stats); skipped != "" {
		fmt.Fprintf(&b, "- %s\n", skipped)
	}
	for _, k := range sortedStats(m.Stats) {
		fmt.Fprintf(&b, "- %s: %d\n", k, m.Stats[k])
	}
	if m.Variant {
		b.WriteString("- a variant (built with parameters): latest does not name it\n")
	}
	b.WriteString("\n| file | rows | sha256 |\n|---|---:|---|\n")
	for _, f := range m.Files {
		fmt.Fprintf(&b, "| %s | %d | `%s` |\n", f.Path, f.Rows, short(f.SHA256))
	}
	if len(m.Sources) > 0 {
		b.WriteString("\n## Sources\n\n")
		for _, s := range m.Sources {
			fmt.Fprintf(&b, "- %s (sha256 `%s`, %d bytes)\n", s.URI, short(s.SHA256), s.Bytes)
		}
	}
	if c.Provenance != "" {
		fmt.Fprintf(&b, "\n%s\n", strings.TrimSpace(c.Provenance))
	}
	return b.String()
}

// sortedStats returns the keys of stats that are not skip counts (those
// SkipSummary renders), sorted.
func sortedStats(stats map[string]int64) []string {
	var keys []string
	for k := range stats {
		if !strings.HasPrefix(k, skippedItems) && !strings.HasPrefix(k, skippedFiles) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

func short(sha string) string { return sha[:min(16, len(sha))] }
