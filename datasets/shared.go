package datasets

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"

	"github.com/benchline/benchline/internal/catalog"
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

// WriteRows writes rows as one Parquet object at key, in batches, calling
// progress with the rows written so far. meta goes into the file's
// key/value metadata.
func WriteRows[T any](ctx context.Context, env Env, key string, rows []T, meta map[string]string, progress func(int64)) (pq.FileInfo, error) {
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
// line of r; uri names r in errors. It reads lines of any length.
func EachLine(r io.Reader, uri string, fn func(line int, raw []byte) error) error {
	br := bufio.NewReaderSize(r, 1<<20)
	for line := 1; ; line++ {
		raw, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(raw)) > 0 {
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
