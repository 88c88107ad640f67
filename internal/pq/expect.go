package pq

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/benchline/benchline/internal/blob"
)

// ErrCorrupt is returned (wrapped) when an object is not the Parquet file
// its reader was promised: no Parquet magic or footer, pages that do not
// decode (parquet-go checks each page's CRC), fewer rows than asked for,
// or, for an object with an Expect (what a manifest promises), another
// size, row count or sha256. The message names the key. Retrying cannot
// fix it. A store that fails to answer is not corruption: that error is
// returned as the store gave it.
var ErrCorrupt = errors.New("pq: corrupt Parquet file")

// Expect is what a manifest promises about one Parquet object. Rows is
// always checked; a zero Bytes, an empty SHA256 or nil Columns is not.
type Expect struct {
	Rows   int64
	Bytes  int64
	SHA256 string
	// Columns are the top-level columns of the table the manifest names
	// (schemas.Columns): the file must have exactly these, in any order.
	Columns []string
}

// expecting is a store that carries promises about some of its objects.
type expecting struct {
	blob.Store
	files map[string]Expect
	cache *VerifiedCache // set by WithVerifiedCache
}

// Expecting returns store with promises about the objects at the keys of
// files. Every reader of this package (ReadEach, ReadAll, ReadRange,
// ReadArrow, Check, OpenObject) that opens one of them through the returned
// store checks it before reading a row: its size, its row count and its
// Parquet footer, and its sha256 when the object is small enough to be
// fetched whole (up to 1 MiB, or up to a quarter of a VerifiedCache the
// store carries, or from a store without ranged reads). A
// broken promise is an error wrapping ErrCorrupt naming the key. Other
// methods pass through to store, so tasks and builders can be handed the
// returned store in place of store.
func Expecting(store blob.Store, files map[string]Expect) blob.Store {
	return &expecting{Store: store, files: files}
}

// expectation returns the store to read key from (store without its
// promises), the promise about key, if any, and the cache of verified
// objects attached, if any.
func expectation(store blob.Store, key string) (blob.Store, *Expect, *VerifiedCache) {
	e, ok := store.(*expecting)
	if !ok {
		return store, nil, nil
	}
	inner, exp, cache := expectation(e.Store, key)
	if x, ok := e.files[key]; ok {
		exp = &x
	}
	if e.cache != nil {
		cache = e.cache
	}
	return inner, exp, cache
}

// checkWhole checks the promised size and, when the object is read whole,
// its sha256; it is called when the object is opened.
func (r *ObjectReaderAt) checkWhole() error {
	exp := r.expect
	if exp == nil {
		return nil
	}
	if exp.Bytes > 0 && r.size != exp.Bytes {
		return fmt.Errorf("pq: %s is %d bytes, its manifest says %d: %w", r.key, r.size, exp.Bytes, ErrCorrupt)
	}
	if exp.SHA256 == "" || !r.readsWhole() {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.fetchWhole(); err != nil {
		return fmt.Errorf("pq: open %s: %w", r.key, err)
	}
	return checkSHA256(r.key, r.whole, exp.SHA256)
}

// checkSHA256 checks that b, the object at key, has the sha256 want.
func checkSHA256(key string, b []byte, want string) error {
	sum := sha256.Sum256(b)
	if got := hex.EncodeToString(sum[:]); got != want {
		return fmt.Errorf("pq: %s has sha256 %s, its manifest says %s: %w", key, got, want, ErrCorrupt)
	}
	return nil
}

// checkRows checks the promised row count against what the footer says.
func (r *ObjectReaderAt) checkRows(rows int64) error {
	if r.expect != nil && rows != r.expect.Rows {
		return fmt.Errorf("pq: %s holds %d rows, its manifest says %d: %w", r.key, rows, r.expect.Rows, ErrCorrupt)
	}
	return nil
}

// checkColumns checks the file's top-level columns against the promised
// table's: a file of another table (whose bytes a rewritten manifest may
// well vouch for) would otherwise read as rows with empty columns.
// got are the file's top-level column names.
func (r *ObjectReaderAt) checkColumns(got []string) error {
	if r.expect == nil || r.expect.Columns == nil {
		return nil
	}
	missing, extra := columnDiff(r.expect.Columns, got)
	if len(missing) == 0 && len(extra) == 0 {
		return nil
	}
	return fmt.Errorf("pq: %s does not have its table's columns: missing %s, extra %s: %w",
		r.key, listOrNone(missing), listOrNone(extra), ErrCorrupt)
}

// columnDiff returns the names of want not in got (missing) and of got not
// in want (extra), each sorted.
func columnDiff(want, got []string) (missing, extra []string) {
	for _, w := range want {
		if !slices.Contains(got, w) {
			missing = append(missing, w)
		}
	}
	for _, g := range got {
		if !slices.Contains(want, g) {
			extra = append(extra, g)
		}
	}
	slices.Sort(missing)
	slices.Sort(extra)
	return missing, extra
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return "[" + strings.Join(names, " ") + "]"
}

// failed returns the error of the first store call that failed, if any.
func (r *ObjectReaderAt) failed() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.storeErr
}

// readError classifies an error of a Parquet library reading the object:
// the store's own failure (or the context's) when there was one, since a
// retry may pass; else the bytes themselves are wrong, ErrCorrupt. what
// says what was being done ("not a Parquet file", "read").
func (r *ObjectReaderAt) readError(what string, err error) error {
	if serr := r.failed(); serr != nil {
		return fmt.Errorf("pq: read %s: %w", r.key, serr)
	}
	if cerr := r.ctx.Err(); cerr != nil {
		return fmt.Errorf("pq: read %s: %w", r.key, cerr)
	}
	return fmt.Errorf("pq: %s: %s (%v): %w", r.key, what, err, ErrCorrupt)
}

// openParquet opens the object at key as a Parquet file with parquet-go,
// checking what it was promised (see Expecting). Release the reader.
func openParquet(ctx context.Context, store blob.Store, key string) (*ObjectReaderAt, *parquet.File, error) {
	ra, err := OpenObject(ctx, store, key)
	if err != nil {
		return nil, nil, err
	}
	f, err := parquet.OpenFile(ra, ra.Size())
	if err != nil {
		ra.Release()
		return nil, nil, ra.readError("not a Parquet file", err)
	}
	if err := ra.checkRows(f.NumRows()); err != nil {
		ra.Release()
		return nil, nil, err
	}
	var cols []string
	for _, fl := range f.Schema().Fields() {
		cols = append(cols, fl.Name())
	}
	if err := ra.checkColumns(cols); err != nil {
		ra.Release()
		return nil, nil, err
	}
	return ra, f, nil
}

// Check opens the Parquet object at key as a reader would, without reading
// rows: it fails as a reader would on an object that is not Parquet or not
// what it was promised (ErrCorrupt), or on a store that fails.
func Check(ctx context.Context, store blob.Store, key string) error {
	ra, _, err := openParquet(ctx, store, key)
	if err != nil {
		return err
	}
	ra.Release()
	return nil
}

// Column is one top-level column of a Parquet file's schema.
type Column struct {
	Name string
	// Type is the column's type in Hugging Face `datasets` feature terms
	// (string, binary, bool, int32, int64, float32, float64), or the
	// Parquet schema's own text for a nested column (a group or a list).
	Type     string
	Nullable bool
	// Nested is true for a group or repeated column (Type is then Parquet's).
	Nested bool
}

// Columns reads the schema in the footer of the Parquet object at key, in
// column order. An object that is not Parquet is an error wrapping
// ErrCorrupt naming the key.
func Columns(ctx context.Context, store blob.Store, key string) ([]Column, error) {
	ra, f, err := openParquet(ctx, store, key)
	if err != nil {
		return nil, err
	}
	defer ra.Release()
	var out []Column
	for _, fld := range f.Schema().Fields() {
		c := Column{Name: fld.Name(), Nullable: fld.Optional()}
		if !fld.Leaf() || fld.Repeated() {
			c.Nested, c.Type = true, fmt.Sprint(fld.Type())
			out = append(out, c)
			continue
		}
		switch t := fld.Type(); t.Kind() {
		case parquet.Boolean:
			c.Type = "bool"
		case parquet.Int32:
			c.Type = "int32"
		case parquet.Int64:
			c.Type = "int64"
		case parquet.Float:
			c.Type = "float32"
		case parquet.Double:
			c.Type = "float64"
		case parquet.ByteArray, parquet.FixedLenByteArray:
			c.Type = "binary"
			if lt := t.LogicalType(); lt != nil {
				switch lt.Value.(type) {
				case *format.StringType, *format.JsonType, *format.EnumType:
					c.Type = "string"
				}
			}
		default:
			c.Type = t.String()
		}
		out = append(out, c)
	}
	return out, nil
}

// Rows reads the row count in the footer of the Parquet object at key. An
// object that is not Parquet is an error wrapping ErrCorrupt naming the key.
func Rows(ctx context.Context, store blob.Store, key string) (int64, error) {
	ra, f, err := openParquet(ctx, store, key)
	if err != nil {
		return 0, err
	}
	defer ra.Release()
	return f.NumRows(), nil
}
