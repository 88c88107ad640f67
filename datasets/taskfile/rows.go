package taskfile

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/source"
	task "github.com/benchline/benchline/scorers/taskfile"
)

// SkipEmptyTarget is the reason a row whose target is empty is skipped:
// counted and shown by the build, never fatal (one unanswered item in a
// set of thousands should not stop it, the rule the built-in builders
// keep for a bad item); a split whose every row is skipped yields no rows,
// which is bad input.
const SkipEmptyTarget = "empty target"

// ToRow turns a record of split into the row the task sees; n is the
// record's number in its split (1-based, for ids when the task names no id
// column). A split other than test (few-shot examples) needs no category
// or cluster column. A column the task reads that the record lacks is bad input
// naming the file, the line and the task file's key; skip is set (and the
// row is not to be used) for a row with an empty target.
func ToRow(c *task.Compiled, split string, rec Record, n int) (row task.Row, skip string, err error) {
	cols := c.Spec.Columns
	missing := func(key, col string) error {
		have := make([]string, 0, len(rec.Fields))
		for k := range rec.Fields {
			have = append(have, k)
		}
		slices.Sort(have)
		return &datasets.InputError{File: rec.File, Line: rec.Line, Msg: fmt.Sprintf(
			"has no column %q (%s in %s); its columns: %s", col, key, c.File, strings.Join(have, ", "))}
	}
	row.Fields = rec.Fields
	switch v, ok := rec.Fields[cols.ID]; {
	case cols.ID != "" && !ok:
		return row, "", missing("columns.id", cols.ID)
	case cols.ID != "":
		row.ID = Text(v)
	default:
		if v, ok := rec.Fields["id"]; ok {
			row.ID = Text(v)
		} else {
			row.ID = "row-" + strconv.Itoa(n)
		}
	}
	if row.ID == "" {
		return row, "", &datasets.InputError{File: rec.File, Line: rec.Line, Msg: "the id is empty"}
	}
	get := func(key, col string, dst *string) error {
		if col == "" {
			return nil
		}
		v, ok := rec.Fields[col]
		if !ok && split != "test" && key != "columns.target" {
			return nil
		}
		if !ok {
			return missing(key, col)
		}
		*dst = Text(v)
		return nil
	}
	if err := get("columns.category", cols.Category, &row.Category); err != nil {
		return row, "", err
	}
	if err := get("columns.cluster", cols.Cluster, &row.Cluster); err != nil {
		return row, "", err
	}
	if err := get("columns.target", cols.Target, &row.Target); err != nil {
		return row, "", err
	}
	if tools := c.Spec.Prompt.Tools; tools != "" {
		v, ok := rec.Fields[tools]
		if !ok {
			return row, "", missing("prompt.tools", tools)
		}
		if _, err := ToolsOf(v); err != nil {
			return row, "", &datasets.InputError{File: rec.File, Line: rec.Line, Msg: fmt.Sprintf("column %q (prompt.tools): %v", tools, err)}
		}
	}
	if cols.Target != "" && strings.TrimSpace(row.Target) == "" {
		return row, SkipEmptyTarget, nil
	}
	if split == "test" {
		if err := c.CheckRow(row); err != nil {
			return row, "", &datasets.InputError{File: rec.File, Line: rec.Line, Msg: fmt.Sprintf("row %s: %v", row.ID, err)}
		}
	}
	return row, "", nil
}

// Text is a column's value as text: strings as they are, whole numbers
// without a decimal point, lists and objects as JSON.
func Text(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	case int64:
		return strconv.FormatInt(t, 10)
	case float64:
		return strconv.FormatFloat(t, 'g', -1, 64)
	case bool:
		if t {
			return "true"
		}
		return "false"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// ToolsOf reads a tools column: a JSON array (or a string holding one) of
// function definitions, bare ({"name", "description", "parameters"}) or as
// OpenAI tools ({"type": "function", "function": {...}}).
func ToolsOf(v any) ([]map[string]any, error) {
	if s, ok := v.(string); ok {
		var x any
		if err := json.Unmarshal([]byte(s), &x); err != nil {
			return nil, fmt.Errorf("not JSON: %v", err)
		}
		v = x
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("want a JSON array of function definitions, not %s", kindOf(v))
	}
	out := make([]map[string]any, 0, len(list))
	for i, x := range list {
		m, ok := x.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("item %d is not an object", i)
		}
		if fn, ok := m["function"].(map[string]any); ok {
			m = fn
		}
		if name, _ := m["name"].(string); name == "" {
			return nil, fmt.Errorf("item %d has no name", i)
		}
		out = append(out, m)
	}
	return out, nil
}

// Local reads a split of a task file whose sources are local files,
// relative to the task file's folder (task check, which runs without a
// stack): fn gets every row that is not skipped, skipped counts those
// that are by reason. max > 0 stops after that many rows.
func Local(c *task.Compiled, split string, max int, fn func(task.Row) error) (skipped map[string]int, err error) {
	return Rows(context.Background(), c, nil, split, max, fn)
}

// Rows is Local for a task file that is a local path or an http(s):// or
// s3:// URL (c.File): a URL's data paths are resolved against its folder
// and read through the source layer (internal/source: bounded by
// limits.max_source_bytes, a deadline on every GET), as a build reads them;
// openS3 opens an s3:// URL's bucket.
func Rows(ctx context.Context, c *task.Compiled, openS3 source.S3Opener, split string, max int, fn func(task.Row) error) (skipped map[string]int, err error) {
	skipped = map[string]int{}
	n, kept := 0, 0
	stop := fmt.Errorf("stop")
	visit := func(rec Record) error {
		n++
		row, skip, err := ToRow(c, split, rec, n)
		if err != nil {
			return err
		}
		if skip != "" {
			skipped[skip]++
			return nil
		}
		kept++
		if err := fn(row); err != nil {
			return err
		}
		if max > 0 && kept >= max {
			return stop
		}
		return nil
	}
	if strings.Contains(c.File, "://") {
		err := eachRemote(ctx, c, openS3, split, visit)
		if err == stop {
			return skipped, nil
		}
		return skipped, err
	}
	base := filepath.Dir(c.File)
	for _, src := range c.Spec.Data[split] {
		if strings.Contains(src.Path, "://") {
			return skipped, fmt.Errorf("%s: data.%s: %s: task check reads local files only; build the dataset (benchline dataset build --task) to read URLs", c.File, split, src.Path)
		}
		p := src.Path
		if !filepath.IsAbs(p) {
			p = filepath.Join(base, p)
		}
		format, err := FormatOf(src)
		if err != nil {
			return skipped, fmt.Errorf("%s: data.%s: %w", c.File, split, err)
		}
		files := []string{p}
		if format == "hf" {
			if files, err = HFFiles(os.DirFS(p), p, src, split); err != nil {
				return skipped, err
			}
			format = "parquet"
		}
		for _, file := range files {
			err := eachLocal(file, format, visit)
			if err == stop {
				return skipped, nil
			}
			if err != nil {
				return skipped, err
			}
		}
	}
	return skipped, nil
}

// eachRemote reads a split of a task file at a URL: each data file
// through the source layer, a Parquet file spooled to a temporary file
// (removed after) since its reader needs random access.
func eachRemote(ctx context.Context, c *task.Compiled, openS3 source.S3Opener, split string, fn func(Record) error) error {
	dir, _ := Split(c.File)
	loc, err := source.Parse(ctx, dir, openS3)
	if err != nil {
		return fmt.Errorf("%s: %w", c.File, err)
	}
	for i, src := range c.Spec.Data[split] {
		format, err := FormatOf(src)
		if err != nil {
			return fmt.Errorf("%s: data.%s: %w", c.File, split, err)
		}
		if format == "hf" {
			format = "parquet"
		}
		files, err := filesOf(ctx, loc, src, split)
		if err != nil {
			return fmt.Errorf("%s: data.%s[%d]: %w", c.File, split, i, err)
		}
		for _, f := range files {
			fl, name := loc, f
			if strings.Contains(f, "://") {
				d, nm := Split(f)
				if fl, err = source.Parse(ctx, d, openS3); err != nil {
					return fmt.Errorf("%s: data.%s[%d]: %w", c.File, split, i, err)
				}
				name = nm
			}
			if err := eachOpened(ctx, fl, name, format, fn); err != nil {
				return err
			}
		}
	}
	return nil
}

func eachOpened(ctx context.Context, loc source.Location, name, format string, fn func(Record) error) error {
	uri := loc.URI(name)
	rc, err := loc.Open(ctx, name)
	if err != nil {
		return &datasets.InputError{File: uri, Msg: "cannot be read: " + err.Error()}
	}
	defer rc.Close()
	if format != "parquet" {
		return EachRecord(rc, uri, format, fn)
	}
	tmp, err := os.CreateTemp("", "benchline-task-*.parquet")
	if err != nil {
		return fmt.Errorf("taskfile: %w", err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	size, err := io.Copy(tmp, rc)
	if err != nil {
		return &datasets.InputError{File: uri, Msg: "cannot be read: " + err.Error()}
	}
	return EachParquet(tmp, size, uri, fn)
}

func eachLocal(file, format string, fn func(Record) error) error {
	st, err := os.Stat(file)
	if err != nil {
		return &datasets.InputError{File: file, Msg: "cannot be read: " + err.Error()}
	}
	if !st.Mode().IsRegular() {
		return &datasets.InputError{File: file, Msg: "is not a regular file"}
	}
	f, err := os.Open(file)
	if err != nil {
		return &datasets.InputError{File: file, Msg: "cannot be read: " + err.Error()}
	}
	defer f.Close()
	if format == "parquet" {
		return EachParquet(f, st.Size(), file, fn)
	}
	return EachRecord(f, file, format, fn)
}
