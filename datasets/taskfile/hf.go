package taskfile

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/limits"
	task "github.com/benchline/benchline/scorers/taskfile"
)

// HFFiles are the Parquet files of one split in a Hugging Face-layout
// folder (as `benchline dataset publish` and the Hub write it): under
// data/ (or the folder itself), in the config's folder when src names one
// (data/config=NAME/ or data/NAME/), the files named SPLIT.parquet,
// SPLIT-*.parquet or held in a folder SPLIT/, in name order. The folder's
// files are listed at most limits.max_source_files; links and other files
// that are not regular are not read.
func HFFiles(fsys fs.FS, root string, src task.Source, split string) ([]string, error) {
	max := limits.Get().SourceFiles
	var all []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !d.Type().IsRegular() || !strings.HasSuffix(p, ".parquet") {
			return nil
		}
		if len(all) == max {
			return fmt.Errorf("holds more than %d files, the limit (limits.max_source_files, BENCHLINE_MAX_SOURCE_FILES)", max)
		}
		all = append(all, p)
		return nil
	})
	if err != nil {
		return nil, &datasets.InputError{File: root, Msg: err.Error()}
	}
	names, err := SplitFiles(all, root, src, split)
	if err != nil {
		return nil, err
	}
	for i, n := range names {
		names[i] = path.Join(root, n)
	}
	return names, nil
}

// SplitFiles picks the Parquet files of a split (and config) among the
// names of an hf folder's files (relative to the folder), in name order;
// root names the folder in errors.
func SplitFiles(all []string, root string, src task.Source, split string) ([]string, error) {
	if src.Split != "" {
		split = src.Split
	}
	var out []string
	for _, p := range all {
		if !strings.HasSuffix(p, ".parquet") {
			continue
		}
		dir, name := path.Split(p)
		dir = strings.TrimSuffix(strings.TrimPrefix(dir, "data/"), "/")
		if dir == "data" {
			dir = ""
		}
		parts := []string{}
		if dir != "" {
			parts = strings.Split(dir, "/")
		}
		// The last folder may be the split's.
		if len(parts) > 0 && parts[len(parts)-1] == split {
			parts = parts[:len(parts)-1]
		} else if name != split+".parquet" && !strings.HasPrefix(name, split+"-") {
			continue
		}
		config := strings.TrimPrefix(strings.Join(parts, "/"), "config=")
		if src.Config != "" && config != src.Config {
			continue
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		configs := map[string]bool{}
		for _, p := range all {
			d := strings.TrimPrefix(path.Dir(p), "data/")
			configs[strings.TrimPrefix(d, "config=")] = true
		}
		var names []string
		for c := range configs {
			names = append(names, c)
		}
		slices.Sort(names)
		return nil, &datasets.InputError{File: root, Msg: fmt.Sprintf("holds no Parquet file of split %q (config %q); its folders: %s", split, src.Config, strings.Join(names, ", "))}
	}
	slices.Sort(out)
	return out, nil
}
