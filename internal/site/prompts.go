package site

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/runs"
)

// The result table stores a prompt's hash, not the prompt. A sample's
// prompt is built by the benchmark's task from its dataset row, so the run
// page shows that row, read generically (every leaf column as "path: value")
// from the dataset version the plan pins: the same for every benchmark, and
// nothing of a task's code linked into the site.

// prompts reads the dataset rows behind a run's results, one shard at a
// time (memory is bounded by the shard size).
type prompts struct {
	ctx     context.Context
	store   blob.Store
	plan    runs.Plan
	shard   int
	rows    map[int64]string
	missing []string // dataset files not found
	// The dataset file last opened, kept across the run's shards (opening
	// decodes the whole footer).
	key  string
	ra   *pq.ObjectReaderAt
	file *parquet.File
}

// close releases the open dataset file.
func (p *prompts) close() {
	if p.ra != nil {
		p.ra.Release()
	}
	p.ra, p.file, p.key = nil, nil, ""
}

// open returns the dataset file at key, opening it when it is not the one
// already open.
func (p *prompts) open(key string) (*parquet.File, error) {
	if p.key == key && p.file != nil {
		return p.file, nil
	}
	p.close()
	ra, err := pq.OpenObject(p.ctx, p.store, key)
	if err != nil {
		return nil, err
	}
	f, err := parquet.OpenFile(ra, ra.Size())
	if err != nil {
		ra.Release()
		return nil, fmt.Errorf("%s: not a Parquet file: %w", key, err)
	}
	p.key, p.ra, p.file = key, ra, f
	return f, nil
}

// row returns the text of the dataset row behind sample index idx of shard.
func (p *prompts) row(shard int32, idx int64) (string, error) {
	if len(p.plan.Files) == 0 {
		return "", nil
	}
	if p.rows == nil || p.shard != int(shard) {
		rg, err := p.plan.Shard(int(shard))
		if err != nil {
			return "", fmt.Errorf("site: run %s: %w", p.plan.RunID, err)
		}
		p.shard, p.rows = int(shard), map[int64]string{}
		key := p.plan.Files[rg.File].Key
		f, err := p.open(key)
		if errors.Is(err, blob.ErrNotFound) {
			if len(p.missing) == 0 || p.missing[len(p.missing)-1] != key {
				p.missing = append(p.missing, key)
			}
			return "", nil
		}
		var texts []string
		if err == nil {
			texts, err = readRows(f, key, rg.Start, rg.Rows)
		}
		if err != nil {
			return "", fmt.Errorf("site: run %s: dataset rows of shard %d: %w", p.plan.RunID, shard, err)
		}
		for k, t := range texts {
			p.rows[rg.First+int64(k)] = t
		}
	}
	return p.rows[idx], nil
}

// readRows renders rows [start, start+n) of a Parquet file as text.
func readRows(f *parquet.File, key string, start, n int64) ([]string, error) {
	if start < 0 || start+n > f.NumRows() {
		return nil, fmt.Errorf("%s: rows [%d, %d) out of range (file has %d rows)", key, start, start+n, f.NumRows())
	}
	cols := f.Schema().Columns()
	rows := parquet.MultiRowGroup(f.RowGroups()...).Rows()
	defer rows.Close()
	if err := rows.SeekToRow(start); err != nil {
		return nil, fmt.Errorf("%s: seek to row %d: %w", key, start, err)
	}
	out := make([]string, 0, n)
	buf := make([]parquet.Row, min(n, 64))
	for int64(len(out)) < n {
		k, err := rows.ReadRows(buf[:min(int64(len(buf)), n-int64(len(out)))])
		for _, r := range buf[:k] {
			out = append(out, rowText(cols, r))
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: read rows: %w", key, err)
		}
		if k == 0 {
			break
		}
	}
	if int64(len(out)) != n {
		return nil, fmt.Errorf("%s: read %d of rows [%d, %d)", key, len(out), start, start+n)
	}
	return out, nil
}

// rowText lists a row's leaf values as "path: value" lines; the values of
// a repeated column share one line, joined by " | ".
func rowText(cols [][]string, r parquet.Row) string {
	var b strings.Builder
	last := -1
	r.Range(func(col int, vals []parquet.Value) bool {
		var parts []string
		for _, v := range vals {
			if v.IsNull() {
				continue
			}
			parts = append(parts, v.String())
		}
		if len(parts) == 0 || col >= len(cols) {
			return true
		}
		if last >= 0 {
			b.WriteByte('\n')
		}
		last = col
		b.WriteString(strings.Join(cols[col], "."))
		b.WriteString(": ")
		b.WriteString(strings.Join(parts, " | "))
		return true
	})
	return clip(b.String())
}
