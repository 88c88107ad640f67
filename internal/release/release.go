// Package release lays a dataset version out as a release that Hugging Face
// `datasets`, DuckDB and Polars read as is, and writes its dataset card.
//
// A release of NAME@VERSION under a destination DEST (s3://bucket/prefix or
// a local directory) is
//
//	DEST/NAME/vVERSION/README.md                 the card: YAML front matter with configs and data_files
//	DEST/NAME/vVERSION/release.json              the layout: every file with rows, bytes and sha256
//	DEST/NAME/vVERSION/data/SPLIT-00000-of-0000N.parquet                 one config ("default")
//	DEST/NAME/vVERSION/data/config=CONFIG/SPLIT-00000-of-0000N.parquet   several configs (hive-style)
//	DEST/NAME/latest                             {"version": "..."}, written last
//
// A run's per-sample results publish the same way as the dataset
// DetailsName(dataset, model), version the run id.
//
// Config and split names are made of word characters (see Sanitize). The
// layout is a pure function of the manifest, so publishing a version twice
// names the same files with the same bytes.
package release

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/benchline/benchline/internal/catalog"
)

// DefaultConfig is the config of a dataset whose builder declares none.
const DefaultConfig = "default"

// Split is the split every part is published in: benchline's datasets are
// evaluation sets, and their manifests know no other split.
const Split = "test"

// File is one data file of a release.
type File struct {
	Src    string `json:"src"`  // path in the version directory (catalog.File.Path)
	Path   string `json:"path"` // path in the release
	Config string `json:"config"`
	Split  string `json:"split"`
	Rows   int64  `json:"rows"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// SplitInfo is one split of one config.
type SplitInfo struct {
	Name  string `json:"name"`
	Glob  string `json:"glob"` // data_files path in the card, relative to the release
	Files int    `json:"files"`
	Rows  int64  `json:"rows"`
	Bytes int64  `json:"bytes"`
}

// Config is one config of a release and its splits.
type Config struct {
	Name   string      `json:"name"`
	Splits []SplitInfo `json:"splits"`
}

// Layout is where every file of a version goes in its release. It is small
// (names, counts and hashes), so it travels through workflow history.
type Layout struct {
	Dataset string `json:"dataset"`
	Version string `json:"version"`
	// SrcDir is the key prefix of the files' Src in the object store
	// (catalog.Dir of the version, or runs.Dir of a run); empty means the
	// dataset version's catalog.Dir.
	SrcDir string `json:"src_dir,omitempty"`
	// Run is the run id of a run's details release (see DetailsName), empty
	// for a dataset version.
	Run string `json:"run,omitempty"`
	// Variant is the version's catalog.Manifest.Variant: publishing it
	// does not move the destination's latest either.
	Variant bool     `json:"variant,omitempty"`
	Rows    int64    `json:"rows"`
	Bytes   int64    `json:"bytes"`
	Files   []File   `json:"files"`
	Configs []Config `json:"configs"`
}

var nonWord = regexp.MustCompile(`\W+`)

// Sanitize turns a label into a name matching ^\w+$ (what the Hugging Face
// hub requires of split names, and what keeps a hive folder name plain):
// every run of other characters becomes one underscore, and underscores
// at either end are dropped. A label with no word character at all gives "".
func Sanitize(label string) string {
	return strings.Trim(nonWord.ReplaceAllString(label, "_"), "_")
}

// Plan lays out m's files. configOf maps a file's label to its config (nil:
// every file is in DefaultConfig); files keep the manifest's order within
// each config. Two labels whose configs sanitize to the same name are
// distinct only if they map to the same config; otherwise Plan fails
// naming both.
func Plan(m catalog.Manifest, configOf func(label string) string) (Layout, error) {
	l := Layout{Dataset: m.Name, Version: m.Version}
	byConfig := map[string][]catalog.File{}
	origin := map[string]string{} // sanitized config -> the config it came from
	var order []string
	for _, f := range m.Files {
		raw := DefaultConfig
		if configOf != nil {
			raw = configOf(f.Label)
		}
		c := Sanitize(raw)
		if c == "" {
			return Layout{}, fmt.Errorf("release: %s@%s: file %s: config %q has no word character", m.Name, m.Version, f.Path, raw)
		}
		if prev, ok := origin[c]; ok && prev != raw {
			return Layout{}, fmt.Errorf("release: %s@%s: configs %q and %q both become %q", m.Name, m.Version, prev, raw, c)
		}
		if _, ok := origin[c]; !ok {
			origin[c] = raw
			order = append(order, c)
		}
		byConfig[c] = append(byConfig[c], f)
	}
	sort.Strings(order)
	hive := len(order) > 1 || (len(order) == 1 && order[0] != DefaultConfig)
	for _, c := range order {
		dir := "data/"
		if hive {
			dir = "data/config=" + c + "/"
		}
		files := byConfig[c]
		s := SplitInfo{Name: Split, Glob: dir + Split + "-*.parquet", Files: len(files)}
		for i, f := range files {
			l.Files = append(l.Files, File{
				Src: f.Path, Path: fmt.Sprintf("%s%s-%05d-of-%05d.parquet", dir, Split, i, len(files)),
				Config: c, Split: Split, Rows: f.Rows, Bytes: f.Bytes, SHA256: f.SHA256,
			})
			s.Rows += f.Rows
			s.Bytes += f.Bytes
		}
		l.Configs = append(l.Configs, Config{Name: c, Splits: []SplitInfo{s}})
		l.Rows += s.Rows
		l.Bytes += s.Bytes
	}
	return l, nil
}

// DetailsName is the dataset name of a run's per-sample results when
// published ("details" releases, one per dataset and model, each run a
// version): details-DATASET-MODEL with the model reduced to word
// characters.
func DetailsName(dataset, model string) string {
	return "details-" + dataset + "-" + Sanitize(model)
}

// Root returns the key prefix of a release below its destination, ending in "/".
func Root(dataset, version string) string { return fmt.Sprintf("%s/v%s/", dataset, version) }

// StagingRoot returns where a release to a local directory is assembled
// before it is renamed to Root, ending in "/".
func StagingRoot(dataset, version string) string {
	return fmt.Sprintf("%s/.staging-v%s/", dataset, version)
}

// LatestKey returns the key of a dataset's latest pointer below the destination.
func LatestKey(dataset string) string { return dataset + "/latest" }

// CardPath and LayoutPath are the card's and the layout's paths in a release.
const (
	CardPath   = "README.md"
	LayoutPath = "release.json"
)
