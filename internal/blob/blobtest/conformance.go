package blobtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/benchline/benchline/internal/blob"
)

// Conformance runs the behaviour every blob.Store must have against a fresh
// store from newStore. Each backend's test calls it.
func Conformance(t *testing.T, newStore func(t *testing.T) blob.Store) {
	ctx := context.Background()
	t.Run("PutGetHead", func(t *testing.T) {
		s := newStore(t)
		want := []byte("hello, benchline")
		if err := blob.PutBytes(ctx, s, "a/b/c.txt", want); err != nil {
			t.Fatal(err)
		}
		got, err := blob.GetBytes(ctx, s, "a/b/c.txt")
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("get = %q, %v; want %q", got, err, want)
		}
		info, err := s.Head(ctx, "a/b/c.txt")
		if err != nil || info.Size != int64(len(want)) || info.Key != "a/b/c.txt" {
			t.Fatalf("head = %+v, %v", info, err)
		}
		// Put replaces.
		if err := blob.PutBytes(ctx, s, "a/b/c.txt", []byte("x")); err != nil {
			t.Fatal(err)
		}
		if got, _ := blob.GetBytes(ctx, s, "a/b/c.txt"); string(got) != "x" {
			t.Fatalf("after overwrite get = %q", got)
		}
	})
	t.Run("PutFromReaders", func(t *testing.T) {
		// The body is what is left of the reader, whatever its kind (a
		// store may send an in-memory reader as it is).
		s := newStore(t)
		partly := bytes.NewReader([]byte("skip:kept"))
		_, _ = partly.Read(make([]byte, 5))
		cases := []struct {
			key  string
			r    io.Reader
			size int64
			want string
		}{
			{"bytes", bytes.NewReader([]byte("from bytes")), 10, "from bytes"},
			{"partly-read", partly, 4, "kept"},
			{"strings", strings.NewReader("from a string"), 13, "from a string"},
			{"unknown-size", bytes.NewReader([]byte("no size")), -1, "no size"},
			{"stream", io.MultiReader(strings.NewReader("a "), strings.NewReader("stream")), 8, "a stream"},
		}
		for _, c := range cases {
			if err := s.Put(ctx, c.key, c.r, c.size); err != nil {
				t.Fatalf("put %s: %v", c.key, err)
			}
			if got, err := blob.GetBytes(ctx, s, c.key); err != nil || string(got) != c.want {
				t.Fatalf("get %s = %q, %v; want %q", c.key, got, err, c.want)
			}
		}
		if err := s.PutIfAbsent(ctx, "if-absent", strings.NewReader("once"), 4); err != nil {
			t.Fatal(err)
		}
		if got, err := blob.GetBytes(ctx, s, "if-absent"); err != nil || string(got) != "once" {
			t.Fatalf("get if-absent = %q, %v", got, err)
		}
	})
	t.Run("NotFound", func(t *testing.T) {
		s := newStore(t)
		if _, err := s.Get(ctx, "missing"); !errors.Is(err, blob.ErrNotFound) {
			t.Fatalf("get missing: %v, want ErrNotFound", err)
		}
		if _, err := s.Head(ctx, "missing"); !errors.Is(err, blob.ErrNotFound) {
			t.Fatalf("head missing: %v, want ErrNotFound", err)
		}
		if ok, err := blob.Exists(ctx, s, "missing"); ok || err != nil {
			t.Fatalf("exists missing = %v, %v", ok, err)
		}
		if err := s.Delete(ctx, "missing"); err != nil {
			t.Fatalf("delete missing: %v", err)
		}
	})
	t.Run("ListSortedByPrefix", func(t *testing.T) {
		s := newStore(t)
		for _, k := range []string{"p/2", "p/1", "p/sub/3", "q/1", "pp/1"} {
			if err := blob.PutBytes(ctx, s, k, []byte(k)); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.List(ctx, "p/")
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, i := range got {
			keys = append(keys, i.Key)
		}
		if fmt.Sprint(keys) != "[p/1 p/2 p/sub/3]" {
			t.Fatalf("list p/ = %v", keys)
		}
	})
	t.Run("ListManyPages", func(t *testing.T) {
		s := newStore(t)
		const n = 1100 // more than one ListObjectsV2 page of 1000
		var wg sync.WaitGroup
		errs := make(chan error, n)
		sem := make(chan struct{}, 16)
		for i := range n {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				errs <- blob.PutBytes(ctx, s, fmt.Sprintf("many/%05d", i), []byte{byte(i)})
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.List(ctx, "many/")
		if err != nil || len(got) != n || got[0].Key != "many/00000" || got[n-1].Key != fmt.Sprintf("many/%05d", n-1) {
			t.Fatalf("list = %d keys, err %v", len(got), err)
		}
	})
	t.Run("Delete", func(t *testing.T) {
		s := newStore(t)
		_ = blob.PutBytes(ctx, s, "d", []byte("1"))
		if err := s.Delete(ctx, "d"); err != nil {
			t.Fatal(err)
		}
		if ok, _ := blob.Exists(ctx, s, "d"); ok {
			t.Fatal("exists after delete")
		}
	})
	conformanceConditional(t, newStore)
}

// conformanceConditional is Conformance's part on conditional and large
// writes: PutIfAbsent alone and in a race, and a multipart upload of
// unknown size.
func conformanceConditional(t *testing.T, newStore func(t *testing.T) blob.Store) {
	ctx := context.Background()
	t.Run("PutIfAbsentFirstWriterWins", func(t *testing.T) {
		s := newStore(t)
		if err := s.PutIfAbsent(ctx, "once", bytes.NewReader([]byte("first")), 5); err != nil {
			t.Fatal(err)
		}
		err := s.PutIfAbsent(ctx, "once", bytes.NewReader([]byte("second")), 6)
		if !errors.Is(err, blob.ErrExists) {
			t.Fatalf("second put-if-absent: %v, want ErrExists", err)
		}
		if got, _ := blob.GetBytes(ctx, s, "once"); string(got) != "first" {
			t.Fatalf("content = %q, want first", got)
		}
	})
	t.Run("PutIfAbsentRace", func(t *testing.T) {
		s := newStore(t)
		const n = 8
		var wg sync.WaitGroup
		var mu sync.Mutex
		wins, exists := 0, 0
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := s.PutIfAbsent(ctx, "race", bytes.NewReader([]byte{byte(i)}), 1)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					wins++
				case errors.Is(err, blob.ErrExists):
					exists++
				default:
					t.Errorf("put-if-absent: %v", err)
				}
			}()
		}
		wg.Wait()
		if wins != 1 || exists != n-1 {
			t.Fatalf("wins=%d exists=%d, want 1 and %d", wins, exists, n-1)
		}
	})
	t.Run("LargeUnknownSizeMultipart", func(t *testing.T) {
		s := newStore(t)
		big := make([]byte, 21<<20+123) // several parts, last one short
		if _, err := rand.Read(big); err != nil {
			t.Fatal(err)
		}
		pr, pw := io.Pipe()
		go func() {
			// Write in odd-sized chunks, as a streaming Parquet writer does.
			for off := 0; off < len(big); off += 333_333 {
				end := min(off+333_333, len(big))
				if _, err := pw.Write(big[off:end]); err != nil {
					return
				}
			}
			pw.Close()
		}()
		if err := s.Put(ctx, "big/blob", pr, -1); err != nil {
			t.Fatal(err)
		}
		got, err := blob.GetBytes(ctx, s, "big/blob")
		if err != nil || !bytes.Equal(got, big) {
			t.Fatalf("large roundtrip: %d bytes, err %v", len(got), err)
		}
		if rg, ok := s.(blob.RangeGetter); ok {
			rc, err := rg.GetRange(ctx, "big/blob", 10<<20, 100)
			if err != nil {
				t.Fatal(err)
			}
			part, _ := io.ReadAll(rc)
			rc.Close()
			if !bytes.Equal(part, big[10<<20:10<<20+100]) {
				t.Fatal("range read mismatch")
			}
		}
	})
}
