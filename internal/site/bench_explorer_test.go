package site

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/memtest"
	"github.com/benchline/benchline/internal/runs"
)

// BenchmarkExplorerFirstSearch times the first search of a server just
// started (its first page asked first, as the run page does) on a run of
// 21,000 samples with replies of 20 KB (issue #33's run), and reports the
// peak heap of building the run's index:
//
//	go test -run '^$' -bench ExplorerFirstSearch -benchtime 3x ./internal/site/
func BenchmarkExplorerFirstSearch(b *testing.B) {
	store, id := bigReplies(b, 42, 500, 20<<10)
	ctx := context.Background()
	keys, err := resultKeys(ctx, store, id)
	if err != nil {
		b.Fatal(err)
	}
	var berr error
	peak := memtest.PeakHeap(func() { berr = buildExplore(ctx, store, id, "accuracy", runs.Plan{}, false, keys) })
	if berr != nil {
		b.Fatal(berr)
	}
	var total time.Duration
	for b.Loop() {
		addr := serveStore(b, store)
		httpGet(b, fmt.Sprintf("http://%s/big/api/samples?run=%s&limit=50", addr, id))
		start := time.Now()
		if code := httpGet(b, fmt.Sprintf("http://%s/big/api/samples?run=%s&q=marker+20977.&limit=50", addr, id)); code != http.StatusOK {
			b.Fatalf("search: %d", code)
		}
		total += time.Since(start)
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "first-search-ms")
	b.ReportMetric(float64(peak)/(1<<20), "build-peak-MiB")
}

// BenchmarkExplorerConcurrentSearches sends 200 searches at once, each
// for another sample, to a server just started on a run of 256 samples
// whose replies are at the reply limit (1 MiB: 256 MiB of texts), and
// reports the server's peak heap (above what the store holds), how many
// were answered and how many were told to come back (503):
//
//	go test -run '^$' -bench ExplorerConcurrentSearches -benchtime 3x ./internal/site/
func BenchmarkExplorerConcurrentSearches(b *testing.B) {
	store, id := bigReplies(b, 32, 8, replyLimit)
	ctx := context.Background()
	keys, err := resultKeys(ctx, store, id)
	if err != nil {
		b.Fatal(err)
	}
	if err := buildExplore(ctx, store, id, "accuracy", runs.Plan{}, false, keys); err != nil {
		b.Fatal(err)
	}
	const clients = 200
	var peak uint64
	var ok, busy int
	for b.Loop() {
		addr := serveStore(b, store)
		codes := make([]int, clients)
		p := memtest.PeakHeap(func() {
			var wg sync.WaitGroup
			for c := range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					codes[c] = httpGet(b, fmt.Sprintf("http://%s/big/api/samples?run=%s&q=marker+%05d.&limit=50", addr, id, c%256))
				}()
			}
			wg.Wait()
		})
		peak = max(peak, p)
		for _, c := range codes {
			switch c {
			case http.StatusOK:
				ok++
			case http.StatusServiceUnavailable:
				busy++
			default:
				b.Fatalf("a search: %d", c)
			}
		}
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(ok)/float64(b.N), "answered")
	b.ReportMetric(float64(busy)/float64(b.N), "503")
}

// serveStore serves store with NewServer on a loopback port until the
// benchmark ends (a new server: nothing loaded).
func serveStore(b *testing.B, store blob.Store) string {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := NewServer(Handler(store))
	go func() { _ = srv.Serve(ln) }()
	b.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

var benchClient = &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 256}}

func httpGet(b *testing.B, url string) int {
	b.Helper()
	resp, err := benchClient.Get(url)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}
