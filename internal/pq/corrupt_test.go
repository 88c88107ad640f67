package pq_test

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/pq"
)

// getDown fails every read of an object's bytes (Head still answers), as
// a store that went away mid-read does.
type getDown struct{ blob.Store }

var errGetDown = errors.New("store unreachable")

func (getDown) Get(context.Context, string) (io.ReadCloser, error) { return nil, errGetDown }
func (getDown) GetRange(context.Context, string, int64, int64) (io.ReadCloser, error) {
	return nil, errGetDown
}

// TestCorruptObjects is finding 2 of issue 11: data is checked where it is
// read. An object that is not the Parquet its reader was promised fails
// every reader with ErrCorrupt naming the key: random bytes of the same
// size (no magic, no footer), and, for an object with a promise (Expect,
// from a manifest), another size, row count or sha256. A store that fails
// to answer is not corruption.
func TestCorruptObjects(t *testing.T) {
	ctx := context.Background()
	const small, big = 1000, 60_000 // under and over the 1 MiB whole-read limit
	type reader func(s blob.Store, key string) error
	readers := map[string]reader{
		"ReadAll": func(s blob.Store, key string) error { _, err := pq.ReadAll[row](ctx, s, key); return err },
		"ReadRange": func(s blob.Store, key string) error {
			return pq.ReadRange(ctx, s, key, 10, 20, func([]row) error { return nil })
		},
		"ReadArrow": func(s blob.Store, key string) error {
			return pq.ReadArrow(ctx, s, key, []string{"id"}, func(arrow.RecordBatch) error { return nil })
		},
		"Check": func(s blob.Store, key string) error { return pq.Check(ctx, s, key) },
	}
	tests := []struct {
		name    string
		rows    int
		spoil   func(b []byte) []byte            // nil: the bytes stay
		expect  func(info pq.FileInfo) pq.Expect // the promise, if any
		wrap    func(s blob.Store) blob.Store    // nil: the store as it is
		corrupt bool                             // want ErrCorrupt
		says    string                           // and the error says this
	}{
		{name: "intact", rows: small},
		{name: "intact, promised", rows: big, expect: promise(0, 0)},
		{name: "random bytes of the same size", rows: small, spoil: randomBytes, corrupt: true, says: "not a Parquet file"},
		{name: "random bytes of the same size, ranged", rows: big, spoil: randomBytes, corrupt: true, says: "not a Parquet file"},
		{name: "a flipped byte, promised sha256", rows: small, spoil: flipMiddle, expect: promise(0, 0), corrupt: true, says: "sha256"},
		{name: "other row count", rows: big, expect: promise(0, 7), corrupt: true, says: "rows"},
		{name: "other size", rows: small, expect: promise(-1, 0), corrupt: true, says: "bytes"},
		{name: "other size, ranged", rows: big, expect: promise(-1, 0), corrupt: true, says: "bytes"},
		{name: "its table's columns, in another order", rows: small, expect: columns("text", "score", "note", "n", "id")},
		{name: "another table's columns", rows: small, expect: columns("id", "n", "text", "label"), corrupt: true, says: "missing [label], extra [note score]"},
		{name: "another table's columns, ranged", rows: big, expect: columns("id", "n", "text", "note", "score", "label"), corrupt: true, says: "missing [label], extra none"},
		{name: "store down", rows: small, wrap: func(s blob.Store) blob.Store { return getDown{s} }, says: errGetDown.Error()},
		{name: "store down, promised", rows: small, expect: promise(0, 0), wrap: func(s blob.Store) blob.Store { return getDown{s} }, says: errGetDown.Error()},
		{name: "store down, ranged", rows: big, wrap: func(s blob.Store) blob.Store { return getDown{s} }, says: errGetDown.Error()},
	}
	for _, tc := range tests {
		for rname, read := range readers {
			t.Run(tc.name+"/"+rname, func(t *testing.T) {
				mem := blobtest.NewMemory()
				const key = "datasets/d/v1/data/part-00000.parquet"
				info := write(t, mem, key, rows(tc.rows), pq.Options{})
				if tc.spoil != nil {
					b, err := blob.GetBytes(ctx, mem, key)
					if err != nil {
						t.Fatal(err)
					}
					if err := blob.PutBytes(ctx, mem, key, tc.spoil(b)); err != nil {
						t.Fatal(err)
					}
				}
				var s blob.Store = mem
				if tc.wrap != nil {
					s = tc.wrap(s)
				}
				if tc.expect != nil {
					s = pq.Expecting(s, map[string]pq.Expect{key: tc.expect(info)})
				}
				err := read(s, key)
				if tc.says == "" {
					if err != nil {
						t.Fatalf("read of an intact object: %v", err)
					}
					return
				}
				if err == nil {
					t.Fatal("read succeeded")
				}
				if got := errors.Is(err, pq.ErrCorrupt); got != tc.corrupt {
					t.Errorf("errors.Is(%v, ErrCorrupt) = %v, want %v", err, got, tc.corrupt)
				}
				if !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), tc.says) {
					t.Errorf("error %q does not name %s and say %q", err, key, tc.says)
				}
			})
		}
	}
}

// promise returns the Expect of a written file, its size moved by dBytes
// and its rows by dRows.
func promise(dBytes, dRows int64) func(info pq.FileInfo) pq.Expect {
	return func(info pq.FileInfo) pq.Expect {
		return pq.Expect{Bytes: info.Bytes + dBytes, Rows: info.Rows + dRows, SHA256: info.SHA256}
	}
}

// columns returns the Expect of a written file promising it has exactly
// the columns cols (as a manifest's table does, schemas.Columns).
func columns(cols ...string) func(info pq.FileInfo) pq.Expect {
	return func(info pq.FileInfo) pq.Expect {
		return pq.Expect{Bytes: info.Bytes, Rows: info.Rows, SHA256: info.SHA256, Columns: cols}
	}
}

func randomBytes(b []byte) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	out := make([]byte, len(b))
	for i := range out {
		out[i] = byte(r.Uint32())
	}
	return out
}

func flipMiddle(b []byte) []byte {
	out := append([]byte(nil), b...)
	out[len(out)/2] ^= 0xff
	return out
}
