package datasets_test

import (
	"strings"
	"testing"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/release"
)

// TestCardRoundTrips: the catalog card's front matter is written by the
// YAML encoder and read back by the release's reader, whatever the name
// holds; the card says what the build skipped.
func TestCardRoundTrips(t *testing.T) {
	name := `BFCL: "v4" # single-turn`
	stats := map[string]int64{}
	datasets.SkipItems(stats, "multi_turn", "not supported", 800)
	datasets.SkipFile(stats, "BFCL_v4_format_sensitivity.json", "format_sensitivity: not a category")
	stats["topics"] = 3
	card := datasets.RenderCard(datasets.CardText{License: "apache-2.0", PrettyName: name, Description: "d"},
		catalog.Manifest{Name: "bfcl", Version: "0123456789abcdef", Stats: stats, Sources: []catalog.Source{{Name: "a.json", URI: "a.json", SHA256: "ab"}}})
	fm, body, err := release.ParseCard(card)
	if err != nil {
		t.Fatal(err)
	}
	if fm.PrettyName != name || fm.License != "apache-2.0" || len(fm.Configs) != 1 || fm.Configs[0].DataFiles[0].Path != "data/*.parquet" {
		t.Errorf("front matter read back as %+v", fm)
	}
	for _, want := range []string{
		"- skipped 800 items: multi_turn 800 (not supported); skipped files: BFCL_v4_format_sensitivity.json (format_sensitivity: not a category)",
		"- topics: 3",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("card body lacks %q:\n%s", want, body)
		}
	}
}
