// Package taskfile builds the dataset a task file names (scorers/taskfile
// is the task file and its scorers): it reads the data in any of the
// formats a task file allows, checks every row against the columns the
// task reads, and renders the prompts.
package taskfile

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/limits"
	task "github.com/benchline/benchline/scorers/taskfile"
)

// FormatOf is a source's format: as given, else from the path's extension.
func FormatOf(src task.Source) (string, error) {
	if src.Format != "" {
		return src.Format, nil
	}
	p := strings.ToLower(strings.TrimSuffix(src.Path, "/"))
	switch path.Ext(p) {
	case ".jsonl", ".ndjson":
		return "jsonl", nil
	case ".json":
		return "json", nil
	case ".csv":
		return "csv", nil
	case ".parquet":
		return "parquet", nil
	case "":
		return "hf", nil
	}
	return "", fmt.Errorf("%s: cannot tell the format from the extension: give format (jsonl, json, csv, parquet or hf)", src.Path)
}

// Record is one row of a source as read: its columns and where it was.
type Record struct {
	File   string
	Line   int // the line (jsonl, csv) or the row's number (json, parquet), 1-based
	Fields map[string]any
}

// EachRecord reads one file of format f (jsonl, json, csv) from r, calling
// fn for every row. Bounds: a line (jsonl, csv) at most limits.max_line_bytes;
// a json file as a whole at most that too (an array is read as one value).
func EachRecord(r io.Reader, uri, f string, fn func(Record) error) error {
	switch f {
	case "jsonl":
		return datasets.EachLine(r, uri, func(line int, raw []byte) error {
			v, err := decodeObject(raw)
			if err != nil {
				return &datasets.InputError{File: uri, Line: line, Msg: err.Error()}
			}
			return fn(Record{File: uri, Line: line, Fields: v})
		})
	case "json":
		max := limits.Get().LineBytes
		data, err := io.ReadAll(io.LimitReader(r, max+1))
		if err != nil {
			return fmt.Errorf("taskfile: read %s: %w", uri, err)
		}
		if int64(len(data)) > max {
			return &datasets.InputError{File: uri, Msg: fmt.Sprintf("a JSON array file is read whole and is longer than %d bytes, the limit (limits.max_line_bytes, BENCHLINE_MAX_LINE_BYTES): write it as JSON lines", max)}
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var arr []json.RawMessage
		if err := dec.Decode(&arr); err != nil {
			return &datasets.InputError{File: uri, Msg: "not a JSON array of objects: " + err.Error()}
		}
		for i, raw := range arr {
			v, err := decodeObject(raw)
			if err != nil {
				return &datasets.InputError{File: uri, Line: i + 1, Msg: fmt.Sprintf("item %d: %v", i+1, err)}
			}
			if err := fn(Record{File: uri, Line: i + 1, Fields: v}); err != nil {
				return err
			}
		}
		return nil
	case "csv":
		return eachCSV(r, uri, fn)
	}
	return fmt.Errorf("taskfile: %s: format %q is not read as a stream", uri, f)
}

func decodeObject(raw []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("not JSON: %v", err)
	}
	if dec.More() {
		return nil, errors.New("more than one JSON value on the line")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("a row is a JSON object, not %s", kindOf(v))
	}
	return task.PlainNumbers(m).(map[string]any), nil
}

func kindOf(v any) string {
	switch v.(type) {
	case []any:
		return "an array"
	case string:
		return "a string"
	case nil:
		return "null"
	case bool:
		return "a boolean"
	}
	return "a number"
}

// eachCSV reads a CSV file with a header row; every row has the header's
// number of fields (a ragged row is bad input naming its line). Values
// are strings, as the Hugging Face datasets library reads CSV without
// features.
func eachCSV(r io.Reader, uri string, fn func(Record) error) error {
	max := limits.Get().LineBytes
	lr := &lineBound{r: r, max: max}
	cr := csv.NewReader(lr)
	cr.ReuseRecord = false
	header, err := cr.Read()
	if err != nil {
		if lr.over {
			return &datasets.InputError{File: uri, Line: 1, Msg: fmt.Sprintf("line is longer than %d bytes, the limit (limits.max_line_bytes, BENCHLINE_MAX_LINE_BYTES)", max)}
		}
		if errors.Is(err, io.EOF) {
			return &datasets.InputError{File: uri, Msg: "is empty: a CSV file starts with a header row"}
		}
		return csvError(uri, err)
	}
	seen := map[string]bool{}
	for i, h := range header {
		h = strings.TrimPrefix(h, "\ufeff")
		header[i] = h
		if h == "" || seen[h] {
			return &datasets.InputError{File: uri, Line: 1, Msg: fmt.Sprintf("header column %d is empty or repeated (%q)", i+1, h)}
		}
		seen[h] = true
	}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		line, _ := cr.FieldPos(0)
		if err != nil {
			if lr.over {
				return &datasets.InputError{File: uri, Line: line, Msg: fmt.Sprintf("line is longer than %d bytes, the limit (limits.max_line_bytes, BENCHLINE_MAX_LINE_BYTES)", max)}
			}
			return csvError(uri, err)
		}
		m := make(map[string]any, len(header))
		for i, h := range header {
			m[h] = rec[i]
		}
		if err := fn(Record{File: uri, Line: line, Fields: m}); err != nil {
			return err
		}
	}
}

func csvError(uri string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		msg := pe.Err.Error()
		if errors.Is(pe.Err, csv.ErrFieldCount) {
			msg = "a ragged row: its number of fields differs from the header's"
		}
		return &datasets.InputError{File: uri, Line: pe.Line, Msg: msg}
	}
	return fmt.Errorf("taskfile: read %s: %w", uri, err)
}

// lineBound fails a read once a line (bytes between newlines) passes max,
// so a CSV record cannot grow without bound.
type lineBound struct {
	r    io.Reader
	max  int64
	run  int64
	over bool
}

func (l *lineBound) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	for _, b := range p[:n] {
		if b == '\n' {
			l.run = 0
			continue
		}
		l.run++
		if l.run > l.max {
			l.over = true
			return 0, errors.New("line too long")
		}
	}
	return n, err
}

// EachParquet reads a Parquet file's rows as columns by name (nested
// groups as maps, lists as lists), calling fn for every row.
func EachParquet(r io.ReaderAt, size int64, uri string, fn func(Record) error) error {
	f, err := parquet.OpenFile(r, size)
	if err != nil {
		return &datasets.InputError{File: uri, Msg: "not a Parquet file: " + err.Error()}
	}
	rd := parquet.NewGenericReader[map[string]any](f, f.Schema())
	defer rd.Close()
	buf := make([]map[string]any, 64)
	row := 0
	for {
		for i := range buf {
			buf[i] = map[string]any{}
		}
		n, err := rd.Read(buf)
		for _, m := range buf[:n] {
			row++
			if err := fn(Record{File: uri, Line: row, Fields: plainParquet(m).(map[string]any)}); err != nil {
				return err
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return &datasets.InputError{File: uri, Line: row + 1, Msg: "reading the row: " + err.Error()}
		}
	}
}

// plainParquet gives Parquet's values the types JSON rows have: whole
// numbers int64, others float64, bytes as text.
func plainParquet(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = plainParquet(x)
		}
		return t
	case []any:
		for i, x := range t {
			t[i] = plainParquet(x)
		}
		return t
	case int32:
		return int64(t)
	case int:
		return int64(t)
	case uint32:
		return int64(t)
	case float32:
		return float64(t)
	case []byte:
		return string(t)
	case float64:
		if t == math.Trunc(t) && math.Abs(t) < 1<<53 {
			return t
		}
	}
	return v
}
