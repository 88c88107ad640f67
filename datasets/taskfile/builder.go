package taskfile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/limits"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/source"
	"github.com/benchline/benchline/schemas"
	task "github.com/benchline/benchline/scorers/taskfile"
)

// BuilderVersion changes whenever what the builder writes for the same task
// file and data changes (2: fields_json keeps a whole float a float, 2.0).
const BuilderVersion = "2"

// PartRows is the most rows one part holds.
const PartRows = 50_000

// MaxPoolRows bounds the few-shot split, which is held in memory while a
// part is written.
const MaxPoolRows = 100_000

// TaskFileKey is where a version keeps its task file, beside its data:
// evaluations compile it from there.
func TaskFileKey(name, version string) string { return catalog.Dir(name, version) + "task.yaml" }

// Builder builds the dataset of one task file. Its Request's Source is the
// task file (a local path on the worker, an http(s):// or s3:// URL); the
// data paths in it are relative to its folder, or URLs of their own.
type Builder struct {
	// Dataset is the task file's name.
	Dataset string
}

var _ datasets.Builder = Builder{}

func (b Builder) Name() string        { return b.Dataset }
func (Builder) Version() string       { return BuilderVersion }
func (Builder) Schema() schemas.Table { return task.TaskRowTable }
func (b Builder) Card(m catalog.Manifest) string {
	return datasets.RenderCard(datasets.CardText{PrettyName: m.Name, License: "other",
		Description: fmt.Sprintf("A benchmark defined by a task file (%s, listed first among the sources, kept beside the data as task.yaml); its prompts are rendered into each row's messages_json. See docs/tasks.md.", taskSource(m))}, m)
}

// MaxCardTaskBytes bounds the task file's text a card shows; a longer one
// is cut at a line and says so.
const MaxCardTaskBytes = 32 << 10

// CardFromStore is Card with the version's task file (TaskFileKey) shown
// in a fenced block, cut at MaxCardTaskBytes.
func (b Builder) CardFromStore(ctx context.Context, store blob.Store, m catalog.Manifest) (string, error) {
	key := TaskFileKey(m.Name, m.Version)
	rc, err := store.Get(ctx, key)
	if err != nil {
		return "", fmt.Errorf("taskfile: read %s: %w", key, err)
	}
	raw, err := limits.ReadFile(rc, key, task.MaxFileBytes)
	rc.Close()
	if err != nil {
		return "", err
	}
	return b.Card(m) + "\n## Task file\n\n" + TaskBlock(raw, MaxCardTaskBytes), nil
}

// TaskBlock renders a task file as a Markdown fenced block whose fence no
// run of backticks in it closes, cut at a line break before limit bytes.
func TaskBlock(raw []byte, limit int) string {
	text, cut := CutTask(raw, limit)
	if cut != "" {
		cut = "\n(" + cut + ")\n"
	}
	fence, run := 3, 0
	for _, r := range text {
		if r == '`' {
			run++
			fence = max(fence, run+1)
		} else {
			run = 0
		}
	}
	f := strings.Repeat("`", fence)
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return f + "yaml\n" + text + f + "\n" + cut
}

// CutTask is a task file's text as cards and pages show it: valid UTF-8,
// cut at a line break before limit bytes; cut says where when it was
// ("cut at N of M bytes"), and is empty when the whole file is shown.
func CutTask(raw []byte, limit int) (text, cut string) {
	text = string(raw)
	if len(text) > limit {
		text = text[:limit]
		if i := strings.LastIndexByte(text, '\n'); i > 0 {
			text = text[:i+1]
		}
		cut = fmt.Sprintf("cut at %d of %d bytes", len(text), len(raw))
	}
	return strings.ToValidUTF8(text, "\uFFFD"), cut
}

// ReadTask reads the task file stored with a task-file dataset's version
// (TaskFileKey), bounded by the task file limit; found is false for a
// version without one (a built-in benchmark's).
func ReadTask(ctx context.Context, store blob.Store, name, version string) (raw []byte, found bool, err error) {
	key := TaskFileKey(name, version)
	rc, err := store.Get(ctx, key)
	if errors.Is(err, blob.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("taskfile: read %s: %w", key, err)
	}
	defer rc.Close()
	raw, err = limits.ReadFile(rc, key, task.MaxFileBytes)
	if err != nil {
		return nil, false, err
	}
	return raw, true, nil
}

func taskSource(m catalog.Manifest) string {
	if len(m.Sources) > 0 {
		return m.Sources[0].URI
	}
	return "task.yaml"
}

// Split splits a task file's URI into its folder and its name.
func Split(uri string) (dir, name string) {
	if i := strings.Index(uri, "://"); i >= 0 {
		j := strings.LastIndex(uri, "/")
		if j > i+2 {
			return uri[:j], uri[j+1:]
		}
		return uri, ""
	}
	return path.Dir(uri), path.Base(uri)
}

// Plan stages the task file and its data, checks every row (its columns,
// its rendered prompt) and splits the test split into parts.
func (b Builder) Plan(ctx context.Context, env datasets.Env, req datasets.Request) (datasets.Plan, error) {
	if len(req.Params) > 0 {
		return datasets.Plan{}, &datasets.InputError{File: req.Source, Msg: "a task file's build takes no --param: its settings are in the file"}
	}
	dir, name := Split(req.Source)
	loc, err := source.Parse(ctx, dir, env.OpenS3)
	if err != nil {
		return datasets.Plan{}, err
	}
	tsrc, err := datasets.Stage(ctx, env, loc, name)
	if err != nil {
		return datasets.Plan{}, err
	}
	c, err := compileStaged(ctx, env, tsrc, loc.URI(name))
	if err != nil {
		return datasets.Plan{}, err
	}
	if c.Spec.Name != b.Dataset {
		return datasets.Plan{}, &datasets.InputError{File: loc.URI(name), Msg: fmt.Sprintf("name: %q, but the build is for %q", c.Spec.Name, b.Dataset)}
	}
	srcs := []catalog.Source{tsrc}
	for _, split := range b.splits(c) {
		for i, s := range c.Spec.Data[split] {
			files, err := filesOf(ctx, loc, s, split)
			if err != nil {
				return datasets.Plan{}, &datasets.InputError{File: loc.URI(name), Msg: fmt.Sprintf("data.%s[%d]: %v", split, i, err)}
			}
			for _, f := range files {
				if slices.ContainsFunc(srcs, func(x catalog.Source) bool { return x.Name == f }) {
					continue
				}
				fl, fname := loc, f
				if strings.Contains(f, "://") {
					d, n := Split(f)
					if fl, err = source.Parse(ctx, d, env.OpenS3); err != nil {
						return datasets.Plan{}, err
					}
					fname = n
				}
				st, err := datasets.Stage(ctx, env, fl, fname)
				if err != nil {
					return datasets.Plan{}, err
				}
				st.Name = f
				srcs = append(srcs, st)
			}
		}
	}
	plan := datasets.NewPlan(b, srcs, nil, nil)
	stats := map[string]int64{}
	var rows int64
	err = eachRow(ctx, env, plan, c, func(int64, task.TaskRow) error { rows++; return nil }, stats)
	if err != nil {
		return datasets.Plan{}, err
	}
	for start, i := int64(0), 0; start < rows; start, i = start+PartRows, i+1 {
		plan.Parts = append(plan.Parts, datasets.Part{Index: i, Label: "test", Inputs: datasets.Inputs(srcs), Start: start, Rows: min(PartRows, rows-start)})
	}
	if len(stats) > 0 {
		plan.Stats = stats
	}
	// The task file beside the data: evaluations compile it from there.
	raw, err := readStaged(ctx, env, tsrc.SHA256, task.MaxFileBytes, loc.URI(name))
	if err != nil {
		return datasets.Plan{}, err
	}
	if err := env.Store.Put(ctx, TaskFileKey(plan.Dataset, plan.Version), bytes.NewReader(raw), int64(len(raw))); err != nil {
		return datasets.Plan{}, fmt.Errorf("taskfile: keep the task file: %w", err)
	}
	return plan, nil
}

// splits are the splits a build reads: test and the few-shot split.
func (Builder) splits(c *task.Compiled) []string {
	out := []string{"test"}
	if f := c.Spec.Prompt.Fewshot; f != nil {
		out = append(out, f.From)
	}
	return out
}

// filesOf are the names of a source's files in loc (or their URLs).
func filesOf(ctx context.Context, loc source.Location, s task.Source, split string) ([]string, error) {
	if strings.Contains(s.Path, "://") {
		return []string{s.Path}, nil
	}
	p := path.Clean(strings.TrimPrefix(s.Path, "./"))
	if path.IsAbs(p) || p == ".." || strings.HasPrefix(p, "../") {
		return nil, fmt.Errorf("path %q leaves the task file's folder: give a path inside it, or a URL", s.Path)
	}
	f, err := FormatOf(s)
	if err != nil {
		return nil, err
	}
	if f != "hf" {
		return []string{p}, nil
	}
	all, err := loc.List(ctx)
	if errors.Is(err, source.ErrNotListable) {
		return nil, fmt.Errorf("an hf folder over http(s) cannot be listed: give its Parquet files as paths, or use a local folder or s3://")
	}
	if err != nil {
		return nil, err
	}
	var under []string
	prefix := strings.TrimSuffix(p, "/") + "/"
	for _, n := range all {
		if strings.HasPrefix(n, prefix) {
			under = append(under, strings.TrimPrefix(n, prefix))
		}
	}
	files, err := SplitFiles(under, loc.URI(p), s, split)
	if err != nil {
		return nil, err
	}
	for i := range files {
		files[i] = prefix + files[i]
	}
	return files, nil
}

func readStaged(ctx context.Context, env datasets.Env, sha string, max int64, name string) ([]byte, error) {
	rc, err := datasets.OpenStaged(ctx, env, sha)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return limits.ReadFile(rc, name, max)
}

func compileStaged(ctx context.Context, env datasets.Env, src catalog.Source, name string) (*task.Compiled, error) {
	raw, err := readStaged(ctx, env, src.SHA256, task.MaxFileBytes, name)
	if err != nil {
		return nil, err
	}
	c, err := task.Load(name, raw)
	if err != nil {
		return nil, inputError(err)
	}
	return c, nil
}

// eachRow reads the plan's test split from the staged sources and calls fn
// with each kept row (its index among them), rendered; stats counts the
// skipped rows by reason.
func eachRow(ctx context.Context, env datasets.Env, plan datasets.Plan, c *task.Compiled, fn func(int64, task.TaskRow) error, stats map[string]int64) error {
	var pool []task.Row
	if f := c.Spec.Prompt.Fewshot; f != nil {
		err := eachSplitRecord(ctx, env, plan, c, f.From, func(r task.Row, _ Record) error {
			if len(pool) == MaxPoolRows {
				return &datasets.InputError{File: c.File, Msg: fmt.Sprintf("prompt.fewshot: split %q has more than %d rows, the limit", f.From, MaxPoolRows)}
			}
			pool = append(pool, r)
			return nil
		}, nil)
		if err != nil {
			return err
		}
		need := f.N
		if f.DropSame && f.Sampler == task.SamplerPython {
			need++ // lm-eval's sampler draws n+1 before it drops the row
		}
		if len(pool) < need {
			return &datasets.InputError{File: c.File, Msg: fmt.Sprintf("prompt.fewshot: split %q has %d usable rows, fewer than the %d drawn for each row", f.From, len(pool), need)}
		}
	}
	var i int64
	seen := map[string]bool{}
	draw := c.ShotDrawer(pool)
	return eachSplitRecord(ctx, env, plan, c, "test", func(r task.Row, rec Record) error {
		if seen[r.ID] {
			return &datasets.InputError{File: rec.File, Line: rec.Line, Msg: fmt.Sprintf("test split: row %s: the id appears twice (columns.id in %s must name a unique column)", r.ID, c.File)}
		}
		seen[r.ID] = true
		shots, err := draw(r)
		if err != nil {
			return inputError(err)
		}
		msgs, err := c.Messages(r, shots)
		if err != nil {
			return inputError(err)
		}
		row, err := taskRow(c, r, msgs)
		if err != nil {
			return err
		}
		if err := fn(i, row); err != nil {
			return err
		}
		i++
		return nil
	}, stats)
}

func taskRow(c *task.Compiled, r task.Row, msgs []openai.ChatCompletionMessage) (task.TaskRow, error) {
	m, err := json.Marshal(msgs)
	if err != nil {
		return task.TaskRow{}, err
	}
	f, err := task.MarshalFields(r.Fields)
	if err != nil {
		return task.TaskRow{}, fmt.Errorf("taskfile: row %s: %w", r.ID, err)
	}
	row := task.TaskRow{ID: r.ID, Category: r.Category, Target: r.Target, Cluster: r.Cluster, MessagesJSON: string(m), FieldsJSON: string(f)}
	if col := c.Spec.Prompt.Tools; col != "" {
		defs, _ := ToolsOf(r.Fields[col]) // checked by ToRow
		tools := make([]openai.Tool, 0, len(defs))
		for _, d := range defs {
			raw, _ := json.Marshal(d)
			var fd openai.FunctionDefinition
			if err := json.Unmarshal(raw, &fd); err != nil {
				return row, fmt.Errorf("taskfile: row %s: a tool: %w", r.ID, err)
			}
			tools = append(tools, openai.Tool{Type: openai.ToolTypeFunction, Function: &fd})
		}
		t, _ := json.Marshal(tools)
		row.ToolsJSON = string(t)
	}
	return row, nil
}

// eachSplitRecord reads split's staged files in order.
func eachSplitRecord(ctx context.Context, env datasets.Env, plan datasets.Plan, c *task.Compiled, split string, fn func(task.Row, Record) error, stats map[string]int64) error {
	n := 0
	for _, s := range c.Spec.Data[split] {
		format, err := FormatOf(s)
		if err != nil {
			return &datasets.InputError{File: c.File, Msg: fmt.Sprintf("data.%s: %v", split, err)}
		}
		for _, src := range sourcesOf(plan, s, split, format) {
			err := eachStaged(ctx, env, src, format, func(rec Record) error {
				n++
				row, skip, err := ToRow(c, split, rec, n)
				if err != nil {
					return err
				}
				if skip != "" {
					if stats != nil {
						stats["skipped: "+skip]++
					}
					return nil
				}
				return fn(row, rec)
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// sourcesOf are the staged sources of one task-file source, in order.
func sourcesOf(plan datasets.Plan, s task.Source, split, format string) []catalog.Source {
	var out []catalog.Source
	p := path.Clean(strings.TrimPrefix(s.Path, "./"))
	if strings.Contains(s.Path, "://") {
		p = s.Path
	}
	if format != "hf" {
		for _, src := range plan.Sources[1:] {
			if src.Name == p {
				out = append(out, src)
			}
		}
		return out
	}
	prefix := strings.TrimSuffix(p, "/") + "/"
	var names []string
	by := map[string]catalog.Source{}
	for _, src := range plan.Sources[1:] {
		if strings.HasPrefix(src.Name, prefix) {
			names = append(names, strings.TrimPrefix(src.Name, prefix))
			by[strings.TrimPrefix(src.Name, prefix)] = src
		}
	}
	files, _ := SplitFiles(names, p, s, split)
	for _, f := range files {
		out = append(out, by[f])
	}
	return out
}

func eachStaged(ctx context.Context, env datasets.Env, src catalog.Source, format string, fn func(Record) error) error {
	rc, err := datasets.OpenStaged(ctx, env, src.SHA256)
	if err != nil {
		return err
	}
	defer rc.Close()
	if format != "hf" && format != "parquet" {
		return EachRecord(rc, src.URI, format, fn)
	}
	// Parquet is read from its footer: through a temporary file, so memory
	// does not follow the file's size.
	tmp, err := os.CreateTemp("", "benchline-taskfile-*.parquet")
	if err != nil {
		return fmt.Errorf("taskfile: %w", err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	n, err := io.Copy(tmp, rc)
	if err != nil {
		return fmt.Errorf("taskfile: read staged %s: %w", src.URI, err)
	}
	return EachParquet(tmp, n, src.URI, fn)
}

// WritePart renders the part's rows again from the staged sources and
// writes them.
func (b Builder) WritePart(ctx context.Context, env datasets.Env, plan datasets.Plan, p datasets.Part, key string, progress func(rows int64)) (pq.FileInfo, error) {
	c, err := compileStaged(ctx, env, plan.Sources[0], plan.Sources[0].URI)
	if err != nil {
		return pq.FileInfo{}, err
	}
	rows := make([]task.TaskRow, 0, p.Rows)
	stop := errors.New("stop")
	err = eachRow(ctx, env, plan, c, func(i int64, r task.TaskRow) error {
		if i >= p.Start+p.Rows {
			return stop
		}
		if i >= p.Start {
			rows = append(rows, r)
		}
		return nil
	}, nil)
	if err != nil && !errors.Is(err, stop) {
		return pq.FileInfo{}, err
	}
	return datasets.WriteRows(ctx, env, key, rows, nil, progress)
}

// inputError is a task file's error as bad input, naming the task file,
// the line, the key and (for a template) the row.
func inputError(err error) error {
	var te *task.Error
	if errors.As(err, &te) {
		msg := te.Msg
		if te.Key != "" {
			msg = te.Key + ": " + msg
		}
		return &datasets.InputError{File: te.File, Line: te.Line, Msg: msg}
	}
	var re *task.RenderError
	if errors.As(err, &re) {
		return &datasets.InputError{File: re.File, Line: re.Line, Msg: fmt.Sprintf("%s: row %s: %s", re.Key, re.Row, re.Msg)}
	}
	return err
}
