package catalog_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/schemas"
)

var tbl = schemas.Table{Name: "t", Version: 1}

func TestVersionID(t *testing.T) {
	a := catalog.Source{Name: "a.json", URI: "/x/a.json", SHA256: "aa"}
	b := catalog.Source{Name: "b.json", URI: "/x/b.json", SHA256: "bb"}
	base := catalog.VersionID("d", "1", tbl, []catalog.Source{a, b}, map[string]string{"k": "v", "j": "w"})
	if len(base) != 16 {
		t.Fatalf("id %q: want 16 hex chars", base)
	}
	same := []struct {
		name string
		id   string
	}{
		{"sources reordered", catalog.VersionID("d", "1", tbl, []catalog.Source{b, a}, map[string]string{"j": "w", "k": "v"})},
		{"URIs differ (same files from a URL)", catalog.VersionID("d", "1", tbl, []catalog.Source{{Name: "a.json", URI: "https://h/a.json", SHA256: "aa"}, b}, map[string]string{"k": "v", "j": "w"})},
	}
	for _, s := range same {
		if s.id != base {
			t.Errorf("%s: id %s, want %s", s.name, s.id, base)
		}
	}
	differ := []struct {
		name string
		id   string
	}{
		{"content", catalog.VersionID("d", "1", tbl, []catalog.Source{{Name: "a.json", SHA256: "ab"}, b}, map[string]string{"k": "v", "j": "w"})},
		{"file renamed", catalog.VersionID("d", "1", tbl, []catalog.Source{{Name: "c.json", SHA256: "aa"}, b}, map[string]string{"k": "v", "j": "w"})},
		{"builder version", catalog.VersionID("d", "2", tbl, []catalog.Source{a, b}, map[string]string{"k": "v", "j": "w"})},
		{"schema version", catalog.VersionID("d", "1", schemas.Table{Name: "t", Version: 2}, []catalog.Source{a, b}, map[string]string{"k": "v", "j": "w"})},
		{"param", catalog.VersionID("d", "1", tbl, []catalog.Source{a, b}, map[string]string{"k": "v2", "j": "w"})},
		{"dataset", catalog.VersionID("e", "1", tbl, []catalog.Source{a, b}, map[string]string{"k": "v", "j": "w"})},
	}
	for _, d := range differ {
		if d.id == base {
			t.Errorf("%s changed but the id did not", d.name)
		}
	}
}

func publish(t *testing.T, s blob.Store, name, version string, rows int64, at time.Time) catalog.Manifest {
	t.Helper()
	ctx := context.Background()
	body := []byte(strings.Repeat("p", int(rows)))
	if err := blob.PutBytes(ctx, s, catalog.PartKey(name, version, 0), body); err != nil {
		t.Fatal(err)
	}
	m := catalog.Manifest{Name: name, Version: version, Schema: tbl, Rows: rows, CreatedAt: at,
		Files: []catalog.File{{Path: catalog.PartPath(0), Rows: rows, Bytes: int64(len(body)),
			SHA256: "ignored"}}}
	if err := catalog.Verify(ctx, s, m); err != nil {
		t.Fatal(err)
	}
	if err := catalog.Publish(ctx, s, m, "# card", catalog.PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestPublishResolveList(t *testing.T) {
	ctx := context.Background()
	s := blobtest.NewMemory()
	if _, err := catalog.Resolve(ctx, s, "d"); !errors.Is(err, catalog.ErrNoDataset) {
		t.Fatalf("resolve before publish: %v", err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	publish(t, s, "d", "0001", 3, t0)
	publish(t, s, "d", "0002", 5, t0.Add(time.Hour))
	publish(t, s, "c", "0003", 1, t0)

	for ref, want := range map[string]string{"d": "0002", "d@latest": "0002", "d@0001": "0001", "d@v0001": "0001"} {
		m, err := catalog.Resolve(ctx, s, ref)
		if err != nil || m.Version != want {
			t.Errorf("resolve %s = %s, %v; want %s", ref, m.Version, err, want)
		}
	}
	if _, err := catalog.Resolve(ctx, s, "d@9999"); !errors.Is(err, catalog.ErrNoDataset) {
		t.Errorf("resolve missing version: %v", err)
	}
	got, err := catalog.List(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	var desc []string
	for _, e := range got {
		l := ""
		if e.Latest {
			l = "*"
		}
		desc = append(desc, e.Name+"@"+e.Version+l)
	}
	if strings.Join(desc, " ") != "c@0003* d@0001 d@0002*" {
		t.Fatalf("list = %v", desc)
	}
	// The card is written before the manifest, and the manifest before latest.
	for _, k := range []string{catalog.CardKey("d", "0002"), catalog.ManifestKey("d", "0002"), catalog.LatestKey("d")} {
		if ok, _ := blob.Exists(ctx, s, k); !ok {
			t.Errorf("%s missing", k)
		}
	}
}

// downStore fails every read with an error that is not blob.ErrNotFound.
type downStore struct{ blob.Store }

var errDown = errors.New("store unreachable")

func (downStore) Head(context.Context, string) (blob.Info, error)    { return blob.Info{}, errDown }
func (downStore) Get(context.Context, string) (io.ReadCloser, error) { return nil, errDown }

func TestVerifyWrapsErrMismatch(t *testing.T) {
	ctx := context.Background()
	s := blobtest.NewMemory()
	m := publish(t, s, "d", "0001", 4, time.Now())
	sum := sha256.Sum256([]byte("pppp")) // publish's part of 4 rows
	m.Files[0].SHA256 = hex.EncodeToString(sum[:])
	type verify func(context.Context, blob.Store, catalog.Manifest) error
	tests := []struct {
		name   string
		verify verify
		store  blob.Store
		edit   func(m *catalog.Manifest)
		// mismatch: the error wraps ErrMismatch and names want; else the
		// error (if any, when want is set) is not a mismatch.
		mismatch bool
		want     string
	}{
		{"files match", catalog.Verify, s, func(*catalog.Manifest) {}, false, ""},
		{"hashes match", catalog.VerifyHashes, s, func(*catalog.Manifest) {}, false, ""},
		{"missing file", catalog.Verify, s, func(m *catalog.Manifest) { m.Files[0].Path = "data/part-00009.parquet" }, true, "data/part-00009.parquet is missing"},
		{"another size", catalog.Verify, s, func(m *catalog.Manifest) { m.Files[0].Bytes = 99 }, true, m.Files[0].Path + " is 4 bytes, manifest says 99"},
		{"rows do not add up", catalog.Verify, s, func(m *catalog.Manifest) { m.Rows = 5 }, true, "files hold 4 rows, manifest says 5"},
		{"another sha256", catalog.VerifyHashes, s, func(m *catalog.Manifest) { m.Files[0].SHA256 = "00" }, true, m.Files[0].Path + " has sha256"},
		{"missing file, hashes", catalog.VerifyHashes, s, func(m *catalog.Manifest) { m.Files[0].Path = "data/part-00009.parquet" }, true, "data/part-00009.parquet is missing"},
		{"store down is not a mismatch", catalog.Verify, downStore{s}, func(*catalog.Manifest) {}, false, errDown.Error()},
		{"store down is not a mismatch, hashes", catalog.VerifyHashes, downStore{s}, func(*catalog.Manifest) {}, false, errDown.Error()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bad := m
			bad.Files = slices.Clone(m.Files)
			tc.edit(&bad)
			err := tc.verify(ctx, tc.store, bad)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("got %v, want no error", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("got no error, want one naming %q", tc.want)
			}
			if got := errors.Is(err, catalog.ErrMismatch); got != tc.mismatch {
				t.Errorf("errors.Is(%v, ErrMismatch) = %v, want %v", err, got, tc.mismatch)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "d@0001") {
				t.Errorf("error %q does not name d@0001 and %q", err, tc.want)
			}
		})
	}
}

// TestVerifyFilesAndChecked: a part overwritten with other bytes of the
// same size passes Verify (sizes) but not VerifyFiles, whose error wraps
// ErrMismatch and pq.ErrCorrupt and names the file; a reader through
// Checked fails the same way, while one through the bare store reads the
// flipped byte's file without noticing.
func TestVerifyFilesAndChecked(t *testing.T) {
	ctx := context.Background()
	type item struct {
		ID string `parquet:"id"`
	}
	tests := []struct {
		name  string
		spoil func(b []byte)
		says  string
	}{
		{"intact", func([]byte) {}, ""},
		{"no magic", func(b []byte) { copy(b, "XXXX") }, "sha256"}, // a small file is read whole: its sha256 is checked first
		{"a flipped byte", func(b []byte) { b[len(b)/2] ^= 1 }, "sha256"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := blobtest.NewMemory()
			key := catalog.PartKey("d", "0001", 0)
			w := pq.NewWriter[item](ctx, s, key, pq.Options{})
			if err := w.Write([]item{{"a"}, {"b"}, {"c"}}); err != nil {
				t.Fatal(err)
			}
			info, err := w.Close()
			if err != nil {
				t.Fatal(err)
			}
			m := catalog.Manifest{Name: "d", Version: "0001", Rows: 3,
				Files: []catalog.File{{Path: catalog.PartPath(0), Rows: 3, Bytes: info.Bytes, SHA256: info.SHA256}}}
			b, _ := blob.GetBytes(ctx, s, key)
			tc.spoil(b)
			if err := blob.PutBytes(ctx, s, key, b); err != nil {
				t.Fatal(err)
			}
			if err := catalog.Verify(ctx, s, m); err != nil {
				t.Fatalf("Verify (sizes only): %v", err)
			}
			verr := catalog.VerifyFiles(ctx, s, m)
			_, rerr := pq.ReadAll[item](ctx, catalog.Checked(s, m), key)
			if tc.says == "" {
				if verr != nil || rerr != nil {
					t.Fatalf("intact version: VerifyFiles %v, read %v", verr, rerr)
				}
				return
			}
			if !errors.Is(verr, catalog.ErrMismatch) || !errors.Is(verr, pq.ErrCorrupt) ||
				!strings.Contains(verr.Error(), "d@0001") || !strings.Contains(verr.Error(), catalog.PartPath(0)) || !strings.Contains(verr.Error(), tc.says) {
				t.Errorf("VerifyFiles = %v: want ErrMismatch and pq.ErrCorrupt naming d@0001, %s, saying %q", verr, catalog.PartPath(0), tc.says)
			}
			if !errors.Is(rerr, pq.ErrCorrupt) || !strings.Contains(rerr.Error(), key) {
				t.Errorf("read through Checked = %v: want pq.ErrCorrupt naming %s", rerr, key)
			}
		})
	}
}
