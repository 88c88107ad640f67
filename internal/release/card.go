package release

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/pq"
)

// CardInfo is what a release card says beyond the layout and the manifest.
type CardInfo struct {
	PrettyName  string
	License     string // SPDX id as the hub spells it (e.g. apache-2.0); empty: "other", see the sources
	Description string // what the benchmark is (the registered Benchmark's Description)
	// Sections is Markdown the version's own card adds after its facts (a
	// task file's "## Task file"), appended as written.
	Sections string
	Columns  []pq.Column
}

// FrontMatter is the card's YAML header, in the hub's dataset card fields.
// It is the one writer (MarshalFront) and reader (ParseCard) of every
// card's front matter: the catalog's (datasets.RenderCard) and a
// release's (Card).
type FrontMatter struct {
	License        string        `yaml:"license,omitempty"`
	PrettyName     string        `yaml:"pretty_name"`
	SizeCategories []string      `yaml:"size_categories,omitempty"`
	Configs        []CardConfig  `yaml:"configs"`
	DatasetInfo    []DatasetInfo `yaml:"dataset_info,omitempty"`
}

// CardConfig is one entry of the card's configs.
type CardConfig struct {
	ConfigName string     `yaml:"config_name"`
	DataFiles  []DataFile `yaml:"data_files"`
}

// DataFile is one split's files (a glob relative to the release).
type DataFile struct {
	Split string `yaml:"split"`
	Path  string `yaml:"path"`
}

// DatasetInfo describes one config: its features and split sizes.
type DatasetInfo struct {
	ConfigName  string      `yaml:"config_name"`
	Features    []Feature   `yaml:"features,omitempty"`
	Splits      []SplitSize `yaml:"splits"`
	DatasetSize int64       `yaml:"dataset_size"`
}

// Feature is one column, as a `datasets` Value dtype.
type Feature struct {
	Name  string `yaml:"name"`
	Dtype string `yaml:"dtype"`
}

// SplitSize is one split's size.
type SplitSize struct {
	Name        string `yaml:"name"`
	NumBytes    int64  `yaml:"num_bytes"` // Parquet bytes (compressed), not Arrow's in-memory size
	NumExamples int64  `yaml:"num_examples"`
}

// SizeCategory is the hub's size bucket for n rows.
func SizeCategory(n int64) string {
	bounds := []struct {
		lim  int64
		name string
	}{
		{1_000, "n<1K"}, {10_000, "1K<n<10K"}, {100_000, "10K<n<100K"}, {1_000_000, "100K<n<1M"},
		{10_000_000, "1M<n<10M"}, {100_000_000, "10M<n<100M"}, {1_000_000_000, "100M<n<1B"},
	}
	for _, b := range bounds {
		if n < b.lim {
			return b.name
		}
	}
	return "n>1T"
}

// Front returns the card's front matter for l. Features are left out when
// a column is nested (the readers then take the types from the Parquet
// schema).
func Front(l Layout, info CardInfo) FrontMatter {
	fm := FrontMatter{License: info.License, PrettyName: info.PrettyName, SizeCategories: []string{SizeCategory(l.Rows)}}
	if fm.License == "" {
		fm.License = "other"
	}
	var features []Feature
	for _, c := range info.Columns {
		if c.Nested {
			features = nil
			break
		}
		features = append(features, Feature{Name: c.Name, Dtype: c.Type})
	}
	for _, c := range l.Configs {
		cc := CardConfig{ConfigName: c.Name}
		di := DatasetInfo{ConfigName: c.Name, Features: features}
		for _, s := range c.Splits {
			cc.DataFiles = append(cc.DataFiles, DataFile{Split: s.Name, Path: s.Glob})
			di.Splits = append(di.Splits, SplitSize{Name: s.Name, NumBytes: s.Bytes, NumExamples: s.Rows})
			di.DatasetSize += s.Bytes
		}
		fm.Configs = append(fm.Configs, cc)
		fm.DatasetInfo = append(fm.DatasetInfo, di)
	}
	return fm
}

// ParseCard splits a card into its front matter and its Markdown body.
func ParseCard(card string) (FrontMatter, string, error) {
	var fm FrontMatter
	rest, ok := strings.CutPrefix(card, "---\n")
	if !ok {
		return fm, "", fmt.Errorf("release: card has no YAML front matter")
	}
	head, body, ok := strings.Cut(rest, "\n---\n")
	if !ok {
		return fm, "", fmt.Errorf("release: card's front matter does not end")
	}
	if err := yaml.Unmarshal([]byte(head), &fm); err != nil {
		return fm, "", fmt.Errorf("release: card's front matter: %w", err)
	}
	return fm, body, nil
}

// Card renders the release's README.md: the front matter, then what the
// benchmark is, how to load it, its schema, rows per config and split,
// provenance (sources with sha256, parameters such as models and seeds,
// build counts, the files), the licence and the command that built it.
func Card(l Layout, m catalog.Manifest, info CardInfo) (string, error) {
	var b strings.Builder
	if err := writeFront(&b, l, info); err != nil {
		return "", err
	}
	fmt.Fprintf(&b, "# %s\n\n", info.PrettyName)
	if d := strings.TrimSpace(info.Description); d != "" {
		fmt.Fprintf(&b, "%s\n\n", d)
	}
	fmt.Fprintf(&b, "Dataset `%s`, version `%s`, built by benchline (builder version %s, schema %s v%d, created %s): %d rows in %d Parquet files.\n\n",
		m.Name, m.Version, m.BuilderVersion, m.Schema.Name, m.Schema.Version, m.CreatedAt.UTC().Format("2006-01-02T15:04:05Z"), l.Rows, len(l.Files))
	writeBody(&b, l, info)

	b.WriteString("## Provenance\n\n")
	if len(m.Sources) > 0 {
		b.WriteString("Sources, by content hash:\n\n| source | uri | bytes | sha256 |\n|---|---|---:|---|\n")
		for _, s := range m.Sources {
			fmt.Fprintf(&b, "| %s | %s | %d | `%s` |\n", s.Name, s.URI, s.Bytes, s.SHA256)
		}
		b.WriteString("\n")
		for _, s := range m.Sources {
			if strings.HasPrefix(s.URI, "store:") {
				b.WriteString("Sources at `store:staging/...` are model outputs generated during the build (saved by sha256).\n\n")
				break
			}
		}
	}
	if len(m.Params) > 0 {
		b.WriteString("Build parameters (the models that generated content and their seeds, where the build called models):\n\n")
		for _, k := range slices.Sorted(maps.Keys(m.Params)) {
			fmt.Fprintf(&b, "- `%s` = `%s`\n", k, m.Params[k])
		}
		b.WriteString("\n")
	}
	if len(m.Stats) > 0 {
		b.WriteString("Counts about the build:\n\n")
		keys := make([]string, 0, len(m.Stats))
		for k := range m.Stats {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "- %s: %d\n", k, m.Stats[k])
		}
		b.WriteString("\n")
	}
	writeFiles(&b, l)

	b.WriteString("\n## Licence\n\n")
	if info.License != "" {
		fmt.Fprintf(&b, "%s, as the builder declares for its sources; see the sources above.\n\n", info.License)
	} else {
		b.WriteString("Not declared by the builder: see the sources above.\n\n")
	}

	fmt.Fprintf(&b, "## How it was built\n\n```sh\n%s\n```\n", BuildCommand(m))
	if sec := strings.TrimSpace(info.Sections); sec != "" {
		fmt.Fprintf(&b, "\n%s\n", sec)
	}
	return b.String(), nil
}

// MarshalFront renders fm through the YAML encoder between its --- lines
// (values are quoted as YAML needs, so a name with ": " or a "#" reads
// back as written); ParseCard reads it back.
func MarshalFront(fm FrontMatter) (string, error) {
	var head strings.Builder
	enc := yaml.NewEncoder(&head)
	enc.SetIndent(2)
	if err := enc.Encode(fm); err != nil {
		return "", fmt.Errorf("release: card front matter: %w", err)
	}
	if err := enc.Close(); err != nil {
		return "", fmt.Errorf("release: card front matter: %w", err)
	}
	return "---\n" + head.String() + "---\n", nil
}

// writeFront writes the YAML front matter between its --- lines.
func writeFront(b *strings.Builder, l Layout, info CardInfo) error {
	head, err := MarshalFront(Front(l, info))
	if err != nil {
		return err
	}
	b.WriteString(head + "\n")
	return nil
}

// writeBody writes the loading snippets, the schema and the configs and
// splits.
func writeBody(b *strings.Builder, l Layout, info CardInfo) {
	b.WriteString("## Loading\n\n```python\nfrom datasets import load_dataset\n")
	first := l.Configs[0]
	fmt.Fprintf(b, "ds = load_dataset(\"RELEASE\", \"%s\", split=\"%s\")  # RELEASE: this directory (the configs below)\n", first.Name, first.Splits[0].Name)
	fmt.Fprintf(b, "ds = load_dataset(\"parquet\", data_files={\"%s\": \"RELEASE/%s\"})\n```\n\n", first.Splits[0].Name, first.Splits[0].Glob)
	hive := "false"
	if strings.Contains(first.Splits[0].Glob, "config=") {
		hive = "true"
	}
	fmt.Fprintf(b, "```sql\nSELECT count(*) FROM read_parquet('RELEASE/data/**/*.parquet', hive_partitioning = %s);\n```\n\n", hive)
	fmt.Fprintf(b, "```python\nimport polars as pl\ndf = pl.read_parquet(\"RELEASE/data/**/*.parquet\", hive_partitioning=%s)\n```\n\n", map[string]string{"true": "True", "false": "False"}[hive])

	if len(info.Columns) > 0 {
		b.WriteString("## Schema\n\n| column | type | nullable |\n|---|---|---|\n")
		for _, c := range info.Columns {
			fmt.Fprintf(b, "| %s | %s | %t |\n", c.Name, c.Type, c.Nullable)
		}
		b.WriteString("\n")
	}

	b.WriteString("## Configs and splits\n\n| config | split | files | rows | bytes | data_files |\n|---|---|---:|---:|---:|---|\n")
	for _, c := range l.Configs {
		for _, s := range c.Splits {
			fmt.Fprintf(b, "| %s | %s | %d | %d | %d | `%s` |\n", c.Name, s.Name, s.Files, s.Rows, s.Bytes, s.Glob)
		}
	}
	b.WriteString("\nEvery part is in the split `test`: benchline's datasets are evaluation sets.\n\n")
}

// writeFiles writes the table of files with their sha256.
func writeFiles(b *strings.Builder, l Layout) {
	b.WriteString("Files (the sha256 was checked after the copy):\n\n| file | from | rows | bytes | sha256 |\n|---|---|---:|---:|---|\n")
	for _, f := range l.Files {
		fmt.Fprintf(b, "| %s | %s | %d | %d | `%s` |\n", f.Path, f.Src, f.Rows, f.Bytes, f.SHA256)
	}
}

// Details is what a run's details card says about the run.
type Details struct {
	Run            string
	Dataset        string
	DatasetVersion string
	Model          string
	Baseline       bool // the model is a deterministic baseline, not an LLM
	Judges         map[string]string
	TaskVersion    string
	Samples        int64
	Metrics        []DetailsMetric
	CreatedAt      time.Time
	Command        string // the `benchline eval` command that runs it again
}

// DetailsMetric is one metric of the run's summary.
type DetailsMetric struct {
	Name                string
	Mean, CILow, CIHigh float64
	N                   int64
}

// DetailsCard renders the README.md of a run's details release: the same
// front matter as a dataset's (one config, split test), then the run, its
// metrics, the loading snippets, the schema of the per-sample results and
// the files, and the command that runs it again.
func DetailsCard(l Layout, d Details, info CardInfo) (string, error) {
	var b strings.Builder
	if err := writeFront(&b, l, info); err != nil {
		return "", err
	}
	fmt.Fprintf(&b, "# %s\n\nPer-sample results (one row per sample, like the Open LLM Leaderboard's details) of run `%s`: model `%s` on dataset `%s@%s` (task version %s), %d samples, created %s.\n\n",
		info.PrettyName, d.Run, d.Model, d.Dataset, d.DatasetVersion, d.TaskVersion, d.Samples, d.CreatedAt.UTC().Format("2006-01-02T15:04:05Z"))
	if d.Baseline {
		b.WriteString("The model is a deterministic baseline, not an LLM.\n\n")
	}
	if len(d.Judges) > 0 {
		b.WriteString("Judges:\n\n")
		for _, k := range slices.Sorted(maps.Keys(d.Judges)) {
			fmt.Fprintf(&b, "- %s: `%s`\n", k, d.Judges[k])
		}
		b.WriteString("\n")
	}
	if len(d.Metrics) > 0 {
		b.WriteString("| metric | mean | 95% CI | n |\n|---|---:|---|---:|\n")
		for _, m := range d.Metrics {
			fmt.Fprintf(&b, "| %s | %.4f | [%.4f, %.4f] | %d |\n", m.Name, m.Mean, m.CILow, m.CIHigh, m.N)
		}
		b.WriteString("\n")
	}
	writeBody(&b, l, info)
	writeFiles(&b, l)
	fmt.Fprintf(&b, "\n## How it was produced\n\n```sh\n%s\n```\n", d.Command)
	return b.String(), nil
}

// BuildCommand returns the `benchline dataset build` command that builds m
// again: its source location (the URL its sources were read from, or DIR
// for a local directory, whose path is not published: see
// source.PublicURI) and its parameters.
func BuildCommand(m catalog.Manifest) string {
	args := []string{"benchline", "dataset", "build", m.Name}
	for _, s := range m.Sources {
		if strings.HasPrefix(s.URI, "store:") {
			continue
		}
		if loc, ok := strings.CutSuffix(s.URI, "/"+s.Name); ok {
			args = append(args, "--source", shellQuote(loc))
			break
		}
		if s.URI == s.Name { // a local directory, whose path is not published
			args = append(args, "--source", "DIR")
			break
		}
	}
	for _, k := range slices.Sorted(maps.Keys(m.Params)) {
		args = append(args, "--param", shellQuote(k+"="+m.Params[k]))
	}
	return strings.Join(args, " ")
}

// shellQuote quotes s for a POSIX shell when it holds anything but plain
// characters.
func shellQuote(s string) string {
	plain := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@,+%", r)) {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
