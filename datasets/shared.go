package datasets

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/limits"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/source"
)

// EmbeddedFixtures returns the directory dir of an embedded file system as
// a source Location named uri (e.g. "embedded://bfcl"): how builders ship
// their demo fixtures inside the binary.
func EmbeddedFixtures(fsys fs.FS, dir, uri string) source.Location {
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	return source.FS(sub, uri)
}

// Locate opens a request's source: a builder's bundled fixtures for "" and
// embedded (its "embedded://<name>"), else a directory, an http(s) URL or
// an s3:// URL (source.Parse).
func Locate(ctx context.Context, env Env, src, embedded string, fixtures func() source.Location) (source.Location, error) {
	if src == "" || src == embedded {
		return fixtures(), nil
	}
	return source.Parse(ctx, src, env.OpenS3)
}

// WriteRows writes rows as one Parquet object at key, in batches, calling
// progress with the rows written so far. meta goes into the file's
// key/value metadata. Before writing anything it checks the rows against
// the rules every table keeps (see CheckRows): a row that breaks one is an
// *InputError and nothing is written.
func WriteRows[T any](ctx context.Context, env Env, key string, rows []T, meta map[string]string, progress func(int64)) (pq.FileInfo, error) {
	if err := CheckRows(key, rows); err != nil {
		return pq.FileInfo{}, err
	}
	w := pq.NewWriter[T](ctx, env.Store, key, pq.Options{Metadata: meta})
	const batch = 256
	for i := 0; i < len(rows); i += batch {
		end := min(i+batch, len(rows))
		if err := w.Write(rows[i:end]); err != nil {
			w.Abort()
			return pq.FileInfo{}, err
		}
		progress(int64(end))
	}
	return w.Close()
}

// EachLine calls fn with the 1-based number and bytes of every non-blank
// line of r; uri names r in errors. A line (a record) longer than the
// process's line limit (limits.max_line_bytes, default 16 MiB) is an
// *InputError naming the file and the line, returned as soon as the limit
// is passed: the rest of the line is never read, so memory stays bounded
// whatever the file. A line that is not valid UTF-8 is an *InputError
// naming the file, the line and the first bad byte (1-based), and fn
// never sees it: Parquet strings are UTF-8 (DuckDB refuses a file with
// others), and every builder reads its sources through here, so bad text
// stops a build at PlanBuild, before anything is written.
func EachLine(r io.Reader, uri string, fn func(line int, raw []byte) error) error {
	return eachLine(r, uri, limits.Get().LineBytes, fn)
}

func eachLine(r io.Reader, uri string, max int64, fn func(line int, raw []byte) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var long []byte // a line longer than br's buffer, gathered
	for line := 1; ; line++ {
		raw, err := br.ReadSlice('\n')
		for errors.Is(err, bufio.ErrBufferFull) {
			if int64(len(long)+len(raw)) > max {
				return &InputError{File: uri, Line: line, Msg: fmt.Sprintf(
					"line is longer than %d bytes, the limit (limits.max_line_bytes, BENCHLINE_MAX_LINE_BYTES); it was not read further", max)}
			}
			long = append(long, raw...)
			raw, err = br.ReadSlice('\n')
		}
		if long != nil {
			raw, long = append(long, raw...), nil
		} else {
			raw = bytes.Clone(raw) // fn may keep it; br reuses its buffer
		}
		if int64(len(raw)) > max {
			return &InputError{File: uri, Line: line, Msg: fmt.Sprintf(
				"line is longer than %d bytes, the limit (limits.max_line_bytes, BENCHLINE_MAX_LINE_BYTES)", max)}
		}
		if len(bytes.TrimSpace(raw)) > 0 {
			if at := invalidUTF8(raw); at >= 0 {
				return &InputError{File: uri, Line: line, Msg: fmt.Sprintf("not valid UTF-8 at byte %d", at+1)}
			}
			if ferr := fn(line, raw); ferr != nil {
				return ferr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("datasets: read %s: %w", uri, err)
		}
	}
}

// EachStagedLine is EachLine over a staged source file.
func EachStagedLine(ctx context.Context, env Env, sha, uri string, fn func(line int, raw []byte) error) error {
	rc, err := OpenStaged(ctx, env, sha)
	if err != nil {
		return err
	}
	defer rc.Close()
	return EachLine(rc, uri, fn)
}

// WriteComputedPart writes the rows a builder recomputed from its staged
// sources for part p, after checking they are as many as the plan says
// (a builder whose computation is not deterministic must not publish).
func WriteComputedPart[T any](ctx context.Context, env Env, plan Plan, p Part, key string, rows []T, progress func(int64)) (pq.FileInfo, error) {
	if int64(len(rows)) != p.Rows {
		return pq.FileInfo{}, fmt.Errorf("%s: part %d: computed %d rows, plan says %d", plan.Dataset, p.Index, len(rows), p.Rows)
	}
	return WriteRows(ctx, env, key, rows, map[string]string{
		"benchline.dataset": plan.Dataset, "benchline.version": plan.Version,
	}, progress)
}

// PartSources returns the sources of plan that part p reads, in the order
// of p.Inputs. An input missing from plan.Sources is an error: the plan is
// corrupt, not the input.
func PartSources(plan Plan, p Part) ([]catalog.Source, error) {
	srcs := make([]catalog.Source, 0, len(p.Inputs))
	for _, sha := range p.Inputs {
		i := slices.IndexFunc(plan.Sources, func(s catalog.Source) bool { return s.SHA256 == sha })
		if i < 0 {
			return nil, fmt.Errorf("%s: part %s: input %s is not among the plan's sources", plan.Dataset, p.Label, sha)
		}
		srcs = append(srcs, plan.Sources[i])
	}
	return srcs, nil
}

// invalidUTF8 returns the offset of the first byte of b that is not part
// of valid UTF-8, or -1 when b is valid.
func invalidUTF8(b []byte) int {
	if utf8.Valid(b) {
		return -1
	}
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}

// CheckRows checks rows of a table struct against the rules every table
// keeps, before any is written: every string (also behind pointers, in
// lists and maps) is valid UTF-8, and every column named *_json that is
// not empty holds JSON. The first row that breaks a rule is an
// *InputError naming the row's source file and line when the table keeps
// them (SourceFile and SourceLine fields), else key, with the row's index
// (0-based) in the part and the column.
func CheckRows[T any](key string, rows []T) error {
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Struct {
		return nil
	}
	fileField, hasFile := t.FieldByName("SourceFile")
	lineField, hasLine := t.FieldByName("SourceLine")
	hasFile = hasFile && fileField.Type.Kind() == reflect.String
	hasLine = hasLine && lineField.Type.Kind() >= reflect.Int && lineField.Type.Kind() <= reflect.Int64
	for i := range rows {
		v := reflect.ValueOf(&rows[i]).Elem()
		col, msg := checkStruct(v, "")
		if msg == "" {
			continue
		}
		ie := &InputError{File: key, Msg: fmt.Sprintf("row %d of %s: column %s: %s", i, key, col, msg)}
		if hasFile {
			if f := v.FieldByIndex(fileField.Index).String(); f != "" && utf8.ValidString(f) {
				ie.File = f
				if hasLine {
					ie.Line = int(v.FieldByIndex(lineField.Index).Int())
				}
			}
		}
		return ie
	}
	return nil
}

// checkStruct checks the exported fields of the struct v, returning the
// column (prefix plus its Parquet name) and what is wrong, or "" and "".
func checkStruct(v reflect.Value, prefix string) (column, problem string) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("parquet"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		name = prefix + name
		if col, msg := checkValue(v.Field(i), name, strings.HasSuffix(name, "_json")); msg != "" {
			return col, msg
		}
	}
	return "", ""
}

func checkValue(v reflect.Value, column string, isJSON bool) (string, string) {
	switch v.Kind() {
	case reflect.String:
		s := v.String()
		if at := invalidUTF8([]byte(s)); at >= 0 {
			return column, fmt.Sprintf("not valid UTF-8 at byte %d", at+1)
		}
		if isJSON && s != "" && !json.Valid([]byte(s)) {
			return column, "not JSON"
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return checkValue(v.Elem(), column, isJSON)
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return "", "" // bytes, not text
		}
		for i := range v.Len() {
			if col, msg := checkValue(v.Index(i), column, false); msg != "" {
				return col, msg
			}
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			if col, msg := checkValue(it.Key(), column, false); msg != "" {
				return col, msg
			}
			if col, msg := checkValue(it.Value(), column, false); msg != "" {
				return col, msg
			}
		}
	case reflect.Struct:
		return checkStruct(v, column+".")
	}
	return "", ""
}
