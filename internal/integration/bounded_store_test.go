package integration

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/app"
	"github.com/benchline/benchline/internal/baseline"
	"github.com/benchline/benchline/internal/benchmark"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/s3blob"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/registry"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/internal/source"
	"github.com/benchline/benchline/internal/wfclient"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/workflows"
)

// Issue 33's store cases: what a build does when the object store is
// full.

// eightPartsBuilder stages its one source and plans eight parts of 64 KiB
// each, written as they are (not Parquet: nothing publishes them here).
type eightPartsBuilder struct{}

func (eightPartsBuilder) Name() string    { return "eightparts" }
func (eightPartsBuilder) Version() string { return "1" }
func (eightPartsBuilder) Schema() schemas.Table {
	return schemas.Table{Name: "eightparts_row", Version: 1}
}
func (b eightPartsBuilder) Plan(ctx context.Context, env datasets.Env, req datasets.Request) (datasets.Plan, error) {
	loc, err := source.Parse(ctx, req.Source, env.OpenS3)
	if err != nil {
		return datasets.Plan{}, err
	}
	src, err := datasets.Stage(ctx, env, loc, "items.jsonl")
	if err != nil {
		return datasets.Plan{}, err
	}
	var parts []datasets.Part
	for i := range 8 {
		parts = append(parts, datasets.Part{Index: i, Label: fmt.Sprint(i), Rows: 1})
	}
	return datasets.NewPlan(b, []catalog.Source{src}, nil, parts), nil
}
func (eightPartsBuilder) WritePart(ctx context.Context, env datasets.Env, _ datasets.Plan, p datasets.Part, key string, _ func(int64)) (pq.FileInfo, error) {
	body := bytes.Repeat([]byte{byte('a' + p.Index)}, 64<<10)
	if err := blob.PutBytes(ctx, env.Store, key, body); err != nil {
		return pq.FileInfo{}, err
	}
	return pq.FileInfo{Key: key, Rows: p.Rows, Bytes: int64(len(body))}, nil
}
func (eightPartsBuilder) Card(catalog.Manifest) string { return "" }

// storageFull is MinIO's answer to a write when its drives are past the
// free-space threshold.
const storageFull = `<?xml version="1.0" encoding="UTF-8"?>
<Error><Code>XMinioStorageFull</Code><Message>Storage backend has reached its minimum free drive threshold. Please delete a few objects to proceed.</Message></Error>`

// TestBuildStoreFull: a build whose store answers the write of its part 5
// with MinIO's 507 XMinioStorageFull (a real HTTP proxy in front of the
// stack's MinIO; every other request passes) fails at once, within a
// deadline far below the 12 attempts' 400 s it used to take, with an
// error saying the store is full and naming the part's key; the write is
// sent once; and the build leaves nothing behind: neither the parts it
// wrote before (they were orphans under the version's data/) nor its
// staged source.
func TestBuildStoreFull(t *testing.T) {
	target, err := url.Parse(stack.Stack.Config.S3.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	var refused atomic.Int64
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.Host = r.In.Host // the host the request was signed for
	}}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/data/part-00005.parquet") {
			_, _ = io.Copy(io.Discard, r.Body)
			refused.Add(1)
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusInsufficientStorage)
			_, _ = io.WriteString(w, storageFull)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer hs.Close()

	cfg := stack.Stack.Config
	cfg.Temporal.TaskQueue = "store-full"
	s3cfg := cfg.S3
	s3cfg.Endpoint = hs.URL
	store, err := s3blob.New(context.Background(), s3cfg)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.Default().With(benchmark.Benchmark{Builder: eightPartsBuilder{}, Description: "eight 64 KiB parts (test only)"})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := app.NewWorkers(stack.Client, cfg, store, stack.Gateway, app.WorkerOptions{Queues: []string{"main"}, Benchmarks: reg})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
	}
	// What an earlier run of this test left (one on code that retried).
	if old, err := stack.Store.List(context.Background(), "datasets/eightparts/"); err == nil {
		for _, o := range old {
			_ = stack.Store.Delete(context.Background(), o.Key)
		}
	}
	dir := t.TempDir()
	body := fmt.Sprintf("{\"id\": %q}\n", t.Name()+time.Now().String()) // staged by no other build
	if err := os.WriteFile(filepath.Join(dir, "items.jsonl"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(body))
	staged := datasets.StagedKey(hex.EncodeToString(sum[:]))

	// The deadline: the 12 attempts of the part took about 400 s.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, err = wfclient.BuildDataset(ctx, stack.Client, cfg, workflows.BuildDatasetInput{Dataset: "eightparts", Request: datasets.Request{Source: dir}})
	if ctx.Err() != nil {
		t.Fatalf("the build did not end within 3 minutes (%v): a full store is retried", err)
	}
	if err == nil || !strings.Contains(err.Error(), "the store is full") || !strings.Contains(err.Error(), "data/part-00005.parquet") {
		t.Fatalf("build: %v; want an error saying the store is full, naming data/part-00005.parquet", err)
	}
	if n := refused.Load(); n != 1 {
		t.Errorf("the full store refused %d writes of part 5: want it written once, not retried", n)
	}
	if left, err := stack.Store.List(ctx, "datasets/eightparts/"); err != nil || len(left) != 0 {
		t.Errorf("the failed build left %d objects under datasets/eightparts/ (%v): %v", len(left), err, left)
	}
	if ok, err := blob.Exists(ctx, stack.Store, staged); err != nil || ok {
		t.Errorf("the failed build left its staged source %s (%v)", staged, err)
	}
}

// TestBatchEvalResultFileOverLimit: batch runs whose output files are
// larger than their provider's max_result_bytes (30 KB; a shard's file of
// 100 echoed synthetic prompts is about twice that) on a real worker
// process, the baseline server over HTTP: with retries, each shard's
// requests past the limit go into new batches and every sample is scored;
// with none (retries: -1), they are unscored infrastructure errors naming
// the limit and the answers read before it are scored. Each run ends
// within its deadline, far below the twelve attempts (about six minutes)
// a shard made when a file over the limit failed it, downloading the
// whole file each time and losing its answers.
func TestBatchEvalResultFileOverLimit(t *testing.T) {
	const n, shardSize, limit = 200, 100, 30_000
	bin := buildBinary(t)
	ds := buildSynthetic(t, n, 3303)
	srv, url := serveBaseline(context.Background(), t, baseline.Options{Batch: baseline.BatchOptions{Delay: 200 * time.Millisecond}})
	providers := filepath.Join(t.TempDir(), "providers.yaml")
	writeFiles(t, filepath.Dir(providers), map[string]string{"providers.yaml": fmt.Sprintf("providers:\n"+
		"  cut:\n    base_url: %[1]s\n    batch: {enabled: true, poll_interval: 200ms, max_result_bytes: %[2]d, retries: 8}\n"+
		"  cut-once:\n    base_url: %[1]s\n    batch: {enabled: true, poll_interval: 200ms, max_result_bytes: %[2]d, retries: -1}\n",
		url, limit)})
	const queue = "batch-over-limit"
	startProcWorker(t, bin, workerEnv(queue, url, "BENCHLINE_PROVIDERS="+providers), "worker", "--queues", "main")

	eval := func(t *testing.T, model string) []schemas.ResultRow {
		t.Helper()
		// The deadline: a shard failing for good took twelve attempts.
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cfg := stack.Stack.Config
		cfg.Temporal.TaskQueue = queue
		run, plan, err := wfclient.StartEval(ctx, stack.Client, cfg, stack.Store, workflows.EvaluateModelInput{Request: runs.Request{
			Dataset: ds, Model: model, ShardSize: shardSize, Batch: true}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := wfclient.WaitEval(ctx, stack.Client, run, plan.RunID, time.Hour, nil); err != nil {
			t.Fatalf("%s: %v (want the run ended within 3 minutes)", model, err)
		}
		_, rows := resultRows(ctx, t, plan.RunID)
		if len(rows) != n {
			t.Fatalf("%d rows, want %d", len(rows), n)
		}
		return rows
	}

	t.Run("retried in new batches", func(t *testing.T) {
		before := srv.BatchStats()
		for _, r := range eval(t, "cut/echo") {
			if r.ErrorClass != "" || len(r.Metrics) == 0 {
				t.Fatalf("sample %s: %s %q: want every sample scored", r.SampleID, r.ErrorClass, r.ErrorMessage)
			}
		}
		st := srv.BatchStats()
		if st.Created-before.Created <= n/shardSize || st.MaxPerKey != 1 {
			t.Fatalf("batch stats %+v (before %+v): want more than one batch per shard (the requests past the limit), none twice", st, before)
		}
		t.Logf("%d batches for %d shards", st.Created-before.Created, n/shardSize)
	})
	t.Run("no retries", func(t *testing.T) {
		var infra int
		for _, r := range eval(t, "cut-once/echo") {
			switch {
			case r.ErrorClass == schemas.ErrorClassInfrastructure:
				infra++
				if len(r.Metrics) != 0 || !strings.Contains(r.ErrorMessage, fmt.Sprintf("exceeds max_result_bytes %d", limit)) {
					t.Fatalf("sample %s: %q: want an unscored infrastructure error naming max_result_bytes", r.SampleID, r.ErrorMessage)
				}
			case r.ErrorClass != "" || len(r.Metrics) == 0:
				t.Fatalf("sample %s: %s %v: want a scored answer", r.SampleID, r.ErrorClass, r.Metrics)
			}
		}
		if infra == 0 || infra == n {
			t.Fatalf("%d infrastructure errors of %d: want the samples past the limit only", infra, n)
		}
		t.Logf("%d of %d samples past the limit", infra, n)
	})
}
