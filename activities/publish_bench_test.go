package activities

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/release"
)

// BenchmarkCopyReleaseFile copies one 32 MiB part from the in-memory store
// to a local release directory: the copy hashes the source as it streams,
// then reads the copy back and hashes it again. The bytes reported are the
// part's, once.
func BenchmarkCopyReleaseFile(b *testing.B) {
	ctx := context.Background()
	store := blobtest.NewMemory()
	data := make([]byte, 32<<20)
	if _, err := rand.Read(data); err != nil {
		b.Fatal(err)
	}
	if err := blob.PutBytes(ctx, store, catalog.PartKey("d", "1", 0), data); err != nil {
		b.Fatal(err)
	}
	sum := sha256.Sum256(data)
	f := release.File{Src: catalog.PartPath(0), Path: "data/test-00000-of-00001.parquet", Bytes: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}
	a := &Publish{Store: store}
	dest := release.Dest{Dir: b.TempDir()}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if err := a.CopyReleaseFile(ctx, CopyReleaseFileInput{Dest: dest, Dataset: "d", Version: "1", File: f}); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := (release.DirStore{Root: dest.Dir}).Delete(ctx, release.StagingRoot("d", "1")+f.Path); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// BenchmarkSHA256Part hashes the same 32 MiB once: the floor of one pass
// over a part, to compare BenchmarkCopyReleaseFile's two hashing passes and
// file write with.
func BenchmarkSHA256Part(b *testing.B) {
	data := make([]byte, 32<<20)
	if _, err := rand.Read(data); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		sha256.Sum256(data)
	}
}
