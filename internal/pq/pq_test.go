package pq_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/pq"
)

type row struct {
	ID    string  `parquet:"id"`
	N     int64   `parquet:"n"`
	Text  string  `parquet:"text"`
	Score float64 `parquet:"score"`
	Note  *string `parquet:"note,optional"`
}

// idOnly projects one column of row.
type idOnly struct {
	ID string `parquet:"id"`
}

func rows(n int) []row {
	out := make([]row, n)
	for i := range out {
		out[i] = row{ID: fmt.Sprintf("r%06d", i), N: int64(i), Text: strings.Repeat("x", i%50), Score: float64(i) / 2}
		if i%3 == 0 {
			s := "third"
			out[i].Note = &s
		}
	}
	return out
}

func write(t *testing.T, s blob.Store, key string, in []row, opts pq.Options) pq.FileInfo {
	t.Helper()
	w := pq.NewWriter[row](context.Background(), s, key, opts)
	for i := 0; i < len(in); i += 777 {
		if err := w.Write(in[i:min(i+777, len(in))]); err != nil {
			t.Fatal(err)
		}
	}
	info, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	return info
}

func TestRoundTripAndProjection(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		n    int
		opts pq.Options
	}{
		{"empty", 0, pq.Options{}},
		{"one row group", 1000, pq.Options{}},
		{"many row groups", 10_000, pq.Options{RowGroupRows: 1000}},
		{"byte-capped row groups", 5000, pq.Options{RowGroupBytes: 16 << 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := blobtest.NewMemory()
			in := rows(tc.n)
			info := write(t, s, "t/x.parquet", in, tc.opts)
			if info.Rows != int64(tc.n) || info.Key != "t/x.parquet" || len(info.SHA256) != 64 {
				t.Fatalf("info = %+v", info)
			}
			stored, err := s.Head(ctx, "t/x.parquet")
			if err != nil || stored.Size != info.Bytes {
				t.Fatalf("stored size %d, info says %d (%v)", stored.Size, info.Bytes, err)
			}
			got, err := pq.ReadAll[row](ctx, s, "t/x.parquet")
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tc.n {
				t.Fatalf("read %d rows, want %d", len(got), tc.n)
			}
			for i := range got {
				if got[i].ID != in[i].ID || got[i].N != in[i].N || got[i].Text != in[i].Text || got[i].Score != in[i].Score ||
					(got[i].Note == nil) != (in[i].Note == nil) {
					t.Fatalf("row %d = %+v, want %+v", i, got[i], in[i])
				}
			}
			ids, err := pq.ReadAll[idOnly](ctx, s, "t/x.parquet")
			if err != nil || len(ids) != tc.n {
				t.Fatalf("projection: %d rows, %v", len(ids), err)
			}
			if tc.n > 0 && ids[tc.n-1].ID != in[tc.n-1].ID {
				t.Fatalf("projection last id = %q", ids[tc.n-1].ID)
			}
		})
	}
}

func TestDeterministicBytes(t *testing.T) {
	// A retried activity must rewrite the same bytes: same rows, same sha256.
	s := blobtest.NewMemory()
	a := write(t, s, "a", rows(3000), pq.Options{RowGroupRows: 1000, Metadata: map[string]string{"k": "v", "a": "b"}})
	b := write(t, s, "b", rows(3000), pq.Options{RowGroupRows: 1000, Metadata: map[string]string{"a": "b", "k": "v"}})
	if a.SHA256 != b.SHA256 || a.Bytes != b.Bytes {
		t.Fatalf("same rows gave different files: %+v vs %+v", a, b)
	}
}

func TestAbortWritesNothing(t *testing.T) {
	s := blobtest.NewMemory()
	w := pq.NewWriter[row](context.Background(), s, "aborted", pq.Options{})
	if err := w.Write(rows(10)); err != nil {
		t.Fatal(err)
	}
	w.Abort()
	if ok, _ := blob.Exists(context.Background(), s, "aborted"); ok {
		t.Fatal("aborted write left an object")
	}
}

func TestReadErrorsNameTheObject(t *testing.T) {
	ctx := context.Background()
	s := blobtest.NewMemory()
	_ = blob.PutBytes(ctx, s, "bad.parquet", []byte("this is not parquet"))
	_, err := pq.ReadAll[row](ctx, s, "bad.parquet")
	if err == nil || !strings.Contains(err.Error(), "bad.parquet") {
		t.Fatalf("err = %v, want one naming bad.parquet", err)
	}
	_, err = pq.ReadAll[row](ctx, s, "missing.parquet")
	if !errors.Is(err, blob.ErrNotFound) || !strings.Contains(err.Error(), "missing.parquet") {
		t.Fatalf("err = %v, want ErrNotFound naming the key", err)
	}
}

func BenchmarkWrite(b *testing.B) {
	in := rows(100_000)
	s := blobtest.NewMemory()
	b.ReportAllocs()
	b.ResetTimer()
	var bytes int64
	for i := 0; i < b.N; i++ {
		w := pq.NewWriter[row](context.Background(), s, "bench", pq.Options{})
		if err := w.Write(in); err != nil {
			b.Fatal(err)
		}
		info, err := w.Close()
		if err != nil {
			b.Fatal(err)
		}
		bytes = info.Bytes
	}
	b.ReportMetric(float64(len(in))*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.SetBytes(bytes)
}

func TestReadArrowProjects(t *testing.T) {
	ctx := context.Background()
	s := blobtest.NewMemory()
	in := rows(5000)
	write(t, s, "a.parquet", in, pq.Options{RowGroupRows: 1000})
	var n int
	var sum float64
	err := pq.ReadArrow(ctx, s, "a.parquet", []string{"score", "id"}, func(rec arrow.RecordBatch) error {
		if rec.NumCols() != 2 || rec.ColumnName(0) != "score" && rec.ColumnName(1) != "score" {
			t.Fatalf("columns = %v", rec.Schema())
		}
		idx := rec.Schema().FieldIndices("score")[0]
		col := rec.Column(idx).(*array.Float64)
		for i := 0; i < col.Len(); i++ {
			sum += col.Value(i)
		}
		n += int(rec.NumRows())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var want float64
	for _, r := range in {
		want += r.Score
	}
	if n != len(in) || sum != want {
		t.Fatalf("arrow read %d rows summing %v; want %d and %v", n, sum, len(in), want)
	}
	if err := pq.ReadArrow(ctx, s, "a.parquet", []string{"nope"}, func(arrow.RecordBatch) error { return nil }); !errors.Is(err, pq.ErrNoColumn) || !strings.Contains(err.Error(), `"nope"`) {
		t.Fatalf("unknown column: %v", err)
	}
}

func TestReadRange(t *testing.T) {
	ctx := context.Background()
	s := blobtest.NewMemory()
	in := rows(5000)
	write(t, s, "r.parquet", in, pq.Options{RowGroupRows: 700})
	for _, tc := range []struct{ start, n int64 }{{0, 10}, {695, 10}, {1400, 1}, {4990, 10}, {0, 5000}, {3000, 0}} {
		var got []idOnly
		err := pq.ReadRange(ctx, s, "r.parquet", tc.start, tc.n, func(b []idOnly) error { got = append(got, b...); return nil })
		if err != nil {
			t.Fatalf("[%d,+%d): %v", tc.start, tc.n, err)
		}
		if int64(len(got)) != tc.n {
			t.Fatalf("[%d,+%d): %d rows", tc.start, tc.n, len(got))
		}
		for i, r := range got {
			if r.ID != in[tc.start+int64(i)].ID {
				t.Fatalf("[%d,+%d): row %d = %s", tc.start, tc.n, i, r.ID)
			}
		}
	}
	if err := pq.ReadRange(ctx, s, "r.parquet", 4990, 11, func([]idOnly) error { return nil }); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Fatalf("past the end: %v", err)
	}
}

func TestMapColumnRoundTrip(t *testing.T) {
	type withMap struct {
		ID      string             `parquet:"id"`
		Metrics map[string]float64 `parquet:"metrics"`
	}
	ctx := context.Background()
	s := blobtest.NewMemory()
	w := pq.NewWriter[withMap](ctx, s, "m", pq.Options{})
	in := []withMap{{"a", map[string]float64{"acc": 1, "f1": 0.5}}, {"b", map[string]float64{}}, {"c", map[string]float64{"acc": 0}}}
	if err := w.Write(in); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := pq.ReadAll[withMap](ctx, s, "m")
	if err != nil || len(got) != 3 || got[0].Metrics["f1"] != 0.5 || len(got[1].Metrics) != 0 || got[2].Metrics["acc"] != 0 {
		t.Fatalf("got %+v, %v", got, err)
	}
}

// BenchmarkReadRange reads 500-row windows (an evaluation shard) out of a
// 100k-row file of 8k-row groups, for two page sizes: the rows decoded per
// window are those of the pages the window touches.
//
//	go test -run '^$' -bench ReadRange ./internal/pq/
func BenchmarkReadRange(b *testing.B) {
	in := make([]row, 100_000)
	for i := range in {
		in[i] = row{ID: fmt.Sprintf("r%06d", i), N: int64(i),
			Text: strings.Repeat(fmt.Sprintf("%x ", uint64(i)*0x9e3779b97f4a7c15), 8), Score: float64(i) / 2}
	}
	for _, page := range []int{1 << 20, 64 << 10} {
		s := blobtest.NewMemory()
		w := pq.NewWriter[row](context.Background(), s, "f", pq.Options{PageBufferSize: page})
		if err := w.Write(in); err != nil {
			b.Fatal(err)
		}
		info, err := w.Close()
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("page=%dKiB", page>>10), func(b *testing.B) {
			b.ReportMetric(float64(info.Bytes), "file-bytes")
			start := int64(0)
			for b.Loop() {
				err := pq.ReadRange(context.Background(), s, "f", start, 500, func([]row) error { return nil })
				if err != nil {
					b.Fatal(err)
				}
				start = (start + 500) % int64(len(in))
			}
			b.ReportMetric(float64(500*b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// TestObjectReaderAtRanged reads a 40 MiB object through the ranged block
// cache (more blocks than it keeps, so blocks are released and reused from
// the pool), from several readers at once, and checks every byte.
func TestObjectReaderAtRanged(t *testing.T) {
	ctx := context.Background()
	s := blobtest.NewMemory()
	data := make([]byte, 40<<20+12345)
	for i := range data {
		data[i] = byte(i*7 + i>>13)
	}
	if err := blob.PutBytes(ctx, s, "big", data); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			ra, err := pq.OpenObject(ctx, s, "big")
			if err != nil {
				t.Error(err)
				return
			}
			defer ra.Release()
			buf := make([]byte, 300_001)
			for off := int64(g * 77_777); off < ra.Size(); off += int64(len(buf)) * 3 {
				n, err := ra.ReadAt(buf, off)
				if err != nil && !errors.Is(err, io.EOF) {
					t.Error(err)
					return
				}
				if !bytes.Equal(buf[:n], data[off:off+int64(n)]) {
					t.Errorf("reader %d: bytes at %d differ", g, off)
					return
				}
				if g == 0 && off > 20<<20 {
					ra.Release() // a released reader fetches again
				}
			}
		})
	}
	wg.Wait()
}

func TestColumns(t *testing.T) {
	ctx := context.Background()
	s := blobtest.NewMemory()
	write(t, s, "t.parquet", rows(10), pq.Options{})
	got, err := pq.Columns(ctx, s, "t.parquet")
	if err != nil {
		t.Fatal(err)
	}
	want := []pq.Column{
		{Name: "id", Type: "string"}, {Name: "n", Type: "int64"}, {Name: "text", Type: "string"},
		{Name: "score", Type: "float64"}, {Name: "note", Type: "string", Nullable: true},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("columns\n got %+v\nwant %+v", got, want)
	}
	if n, err := pq.Rows(ctx, s, "t.parquet"); n != 10 || err != nil {
		t.Fatalf("rows: %d, %v", n, err)
	}
	if err := blob.PutBytes(ctx, s, "bad.parquet", []byte("not parquet at all")); err != nil {
		t.Fatal(err)
	}
	if _, err := pq.Columns(ctx, s, "bad.parquet"); !errors.Is(err, pq.ErrCorrupt) || !strings.Contains(err.Error(), "bad.parquet") {
		t.Fatalf("columns of a file that is not Parquet: %v", err)
	}
	if _, err := pq.Rows(ctx, s, "bad.parquet"); !errors.Is(err, pq.ErrCorrupt) {
		t.Fatalf("rows of a file that is not Parquet: %v", err)
	}
}
