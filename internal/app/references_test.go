package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/app"
	"github.com/benchline/benchline/internal/baseline"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/refkey"
	"github.com/benchline/benchline/internal/source"
	"github.com/benchline/benchline/scorers"
	openai "github.com/sashabaranov/go-openai"
)

// TestLoadReferencesPaths loads the engine's references from every kind of
// path serve-baselines --references accepts, and fails on paths it cannot
// use.
func TestLoadReferencesPaths(t *testing.T) {
	ctx := context.Background()
	q := []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "2+2?"}}
	line := func(content string) string {
		b, err := json.Marshal(scorers.Reference{Messages: q, Content: content})
		if err != nil {
			t.Fatal(err)
		}
		return string(b) + "\n"
	}
	bucket := blobtest.NewMemory()
	if err := blob.PutBytes(ctx, bucket, "references/ds/v1/task-1.jsonl", []byte(line("4"))); err != nil {
		t.Fatal(err)
	}
	if err := blob.PutBytes(ctx, bucket, "references/bad/v1/task-1.jsonl", []byte(line("x")+`{"messages":[{"role":"user","content":"q"}]}`+"\n")); err != nil {
		t.Fatal(err)
	}
	var opened []string
	open := source.S3Opener(func(_ context.Context, b, prefix string) (blob.Store, error) {
		opened = append(opened, b+"/"+prefix)
		return bucket, nil
	})
	dir := t.TempDir()
	good := filepath.Join(dir, "good", "task-1.jsonl")
	empty := filepath.Join(dir, "empty")
	for p, body := range map[string]string{good: line("4"), filepath.Join(empty, "notes.txt"): "not references"} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name, path, want string
	}{
		{"local file", good, ""},
		{"local directory", filepath.Join(dir, "good"), ""},
		{"s3 file", "s3://evals/references/ds/v1/task-1.jsonl", ""},
		{"s3 prefix", "s3://evals/references/ds", ""},
		{"s3 prefix with a bad file", "s3://evals/references/", "s3://evals/references/bad/v1/task-1.jsonl:2: "},
		{"directory without references", empty, "no references"},
		{"missing file", filepath.Join(dir, "none.jsonl"), "no such file"},
		{"s3 prefix without references", "s3://evals/nothing/", "no references"},
		{"s3 without bucket", "s3:///x", "want s3://bucket/key"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			refs, err := app.LoadReferences(ctx, open, tc.path)
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err = %v, want one containing %q", err, tc.want)
				}
				if strings.Contains(tc.want, "no references") && !errors.Is(err, app.ErrNoReferences) {
					t.Errorf("errors.Is(%v, ErrNoReferences) is false", err)
				}
				if strings.Contains(tc.name, "bad file") && !errors.Is(err, baseline.ErrBadReferences) {
					t.Errorf("errors.Is(%v, ErrBadReferences) is false", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ref, ok := refs.Lookup(refkey.Conversation(q)); !ok || ref.Content != "4" {
				t.Errorf("lookup = %+v, %v", ref, ok)
			}
		})
	}
	if len(opened) == 0 || opened[0] != "evals/" {
		t.Errorf("opened %v, want the bucket evals with no prefix", opened)
	}
}

// slowList is a store whose listings take a while and are counted.
type slowList struct {
	blob.Store
	lists atomic.Int32
}

func (s *slowList) List(ctx context.Context, prefix string) ([]blob.Info, error) {
	s.lists.Add(1)
	time.Sleep(50 * time.Millisecond)
	return s.Store.List(ctx, prefix)
}

// TestStoreReferencesMissesShareOneListing: the requests of a run's first
// wave miss together; the first lists the store, and those that arrived
// while it listed find their reference when it ends, instead of waiting
// for another listing (which cannot start before scanEvery).
func TestStoreReferencesMissesShareOneListing(t *testing.T) {
	ctx := context.Background()
	q := []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "2+2?"}}
	store := &slowList{Store: blobtest.NewMemory()}
	b, _ := json.Marshal(scorers.Reference{Messages: q, Content: "4"})
	if err := blob.PutBytes(ctx, store, "references/ds/v1/task-1.jsonl", append(b, '\n')); err != nil {
		t.Fatal(err)
	}
	refs := &app.StoreReferences{Store: store}
	key := refkey.Conversation(q)
	var wg sync.WaitGroup
	var found atomic.Int32
	lookup := func() {
		if ref, ok := refs.Lookup(key); ok && ref.Content == "4" {
			found.Add(1)
		}
	}
	wg.Go(lookup) // starts the listing
	time.Sleep(10 * time.Millisecond)
	for range 32 { // arrive while it lists
		wg.Go(lookup)
	}
	wg.Wait()
	if found.Load() != 33 || store.lists.Load() != 1 {
		t.Fatalf("%d of 33 lookups found the reference, with %d listings; want all with 1", found.Load(), store.lists.Load())
	}
}
