package integration

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/aggregate"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/leaderboard"
	"github.com/benchline/benchline/internal/memtest"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/internal/site"
	"github.com/benchline/benchline/schemas"
)

// boundedServeBoard writes to the stack's MinIO a run of 64 samples whose
// replies are at the reply limit (1 MiB each, compressible, each holding
// its marker "marker NNNNN."), its explorer index (the run claims more
// samples than the static limit, as a large run does), and a board
// "bounded" showing it; it serves the store with site.NewServer, as
// `benchline leaderboard serve` does, on a loopback port.
func boundedServeBoard(t *testing.T, ctx context.Context) (addr, runID string) {
	t.Helper()
	store := stack.Store
	runID = fmt.Sprintf("rbounded%07d", time.Now().UnixNano()%10_000_000)
	filler := strings.Repeat("lorem ipsum dolor sit amet ", (1<<20)/27+1)
	for f := range 8 {
		rows := make([]schemas.ResultRow, 8)
		for k := range rows {
			i := f*8 + k
			resp := fmt.Sprintf("Marker %05d. ", i)
			rows[k] = schemas.ResultRow{RunID: runID, SampleID: fmt.Sprintf("s-%05d", i), SampleIndex: int64(i), Shard: int32(f),
				Model: "m", Response: resp + filler[:1<<20-len(resp)], Metrics: map[string]float64{"accuracy": 1}, Calls: 1, Attempts: 1}
		}
		w := pq.NewWriter[schemas.ResultRow](ctx, store, runs.ShardKey(runID, f), pq.Options{})
		if err := w.Write(rows); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	run := leaderboard.Run{RunID: runID, Dataset: "d", Model: "m", Summary: aggregate.Summary{Samples: site.MaxStaticSamples + 1}}
	if err := site.ExplorerIndex(ctx, store, run, "accuracy"); err != nil {
		t.Fatal(err)
	}
	s := leaderboard.Scores{Board: "bounded", Stamp: "20261128T000000Z", Runs: []leaderboard.Run{run}}
	if err := blob.PutJSON(ctx, store, leaderboard.ScoresKey(s.Board, s.Stamp), s); err != nil {
		t.Fatal(err)
	}
	if err := blob.PutBytes(ctx, store, leaderboard.LatestKey(s.Board), []byte(s.Stamp)); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := site.NewServer(site.Handler(store))
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String(), runID
}

// TestServeBoundedSearches sends 200 explorer searches at once, each for
// another sample, to `leaderboard serve`'s server on a run whose replies
// are at the reply limit: the process's heap stays under a bound that
// follows neither the replies nor the clients (before, each search
// decompressed all 64 MiB of texts into its own buffer: 200 of them about
// 13 GB), each search is answered with its one sample or told to come
// back (503 with Retry-After), and another client is answered meanwhile.
func TestServeBoundedSearches(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	addr, id := boundedServeBoard(t, ctx)
	client := &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	defer client.CloseIdleConnections()
	get := func(url string) (int, string, error) {
		resp, err := client.Get(url)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Retry-After") + " " + string(b), err
	}
	const clients = 200
	var mu sync.Mutex
	var problems []string
	answered := 0
	var other string
	peak := memtest.PeakHeap(func() {
		var wg sync.WaitGroup
		for c := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				i := c % 64
				code, body, err := get(fmt.Sprintf("http://%s/bounded/api/samples?run=%s&q=marker+%05d.&limit=50", addr, id, i))
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err != nil:
					problems = append(problems, fmt.Sprintf("search %d: %v", c, err))
				case code == http.StatusOK && strings.Contains(body, `"matched":1,`) && strings.Contains(body, fmt.Sprintf(`"id":"s-%05d"`, i)):
					answered++
				case code == http.StatusServiceUnavailable && !strings.HasPrefix(body, " "):
				default:
					problems = append(problems, fmt.Sprintf("search %d: %d %.200s", c, code, body))
				}
			}()
		}
		// Another client, while the searches run.
		time.Sleep(100 * time.Millisecond)
		code, body, err := get(fmt.Sprintf("http://%s/bounded/scores.json", addr))
		if err != nil || code != http.StatusOK {
			other = fmt.Sprintf("%d %v %.200s", code, err, body)
		}
		wg.Wait()
	})
	for _, p := range problems {
		t.Error(p)
	}
	if other != "" {
		t.Errorf("another client during the searches: %s", other)
	}
	if answered == 0 {
		t.Error("no search was answered")
	}
	t.Logf("%d searches at once: %d answered, the others 503; peak heap %d MiB above the start", clients, answered, peak>>20)
	const bound = 256 << 20
	if peak > bound {
		t.Errorf("%d searches at once of 64 replies of 1 MiB took %d MiB of heap, want at most %d MiB", clients, peak>>20, bound>>20)
	}
}

// TestServeBoundedSlowBodies opens 300 connections to `leaderboard
// serve`'s server that announce a 200,000-byte body and trickle it: each
// is answered 413 and closed, and another client is answered meanwhile
// (before, the server read each body to its end before answering).
func TestServeBoundedSlowBodies(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	addr, _ := boundedServeBoard(t, ctx)
	const conns = 300
	deadline := time.Now().Add(2 * time.Minute) // against hangs only
	stop := make(chan struct{})
	var wg sync.WaitGroup
	answers := make(chan string, conns)
	for range conns {
		c, err := net.DialTimeout("tcp", addr, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := fmt.Fprintf(c, "GET /bounded/scores.json HTTP/1.1\r\nHost: x\r\nContent-Length: 200000\r\n\r\nx"); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() { // trickle the body
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				case <-time.After(200 * time.Millisecond):
					if _, err := c.Write([]byte("x")); err != nil {
						return
					}
				}
			}
		}()
		go func() {
			_ = c.SetReadDeadline(deadline)
			r := bufio.NewReader(c)
			status, err := r.ReadString('\n')
			if err != nil {
				answers <- "no answer: " + readFailure(err)
				return
			}
			if _, err = io.Copy(io.Discard, r); err != nil {
				answers <- strings.TrimSpace(status) + ", then the connection stayed open: " + readFailure(err)
				return
			}
			answers <- strings.TrimSpace(status)
		}()
	}
	resp, err := (&http.Client{Timeout: time.Minute}).Get("http://" + addr + "/bounded/scores.json")
	if err != nil {
		t.Errorf("another client, while %d connections trickle bodies: %v", conns, err)
	} else {
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("another client: %s", resp.Status)
		}
	}
	bad := map[string]int{}
	for range conns {
		a := <-answers
		if !strings.HasPrefix(a, "HTTP/1.1 413 ") || strings.Contains(a, "stayed open") {
			bad[a]++
		}
	}
	close(stop)
	wg.Wait()
	for a, n := range bad {
		t.Errorf("%d of %d slow-body connections: %q, want 413 and closed", n, conns, a)
	}
}

// BenchmarkServeFirstSearch times the first search of `leaderboard
// serve`'s server just started (its first page asked first, as the run
// page does) on a run of 21,000 samples with replies of 20 KB in the
// stack's MinIO (issue #33's run; docs/PERFORMANCE.md), a new server and
// another sample each round:
//
//	go test -run '^$' -bench ServeFirstSearch -benchtime 3x ./internal/integration/
func BenchmarkServeFirstSearch(b *testing.B) {
	ctx := context.Background()
	store := stack.Store
	runID := fmt.Sprintf("rfirst%07d", time.Now().UnixNano()%10_000_000)
	filler := strings.Repeat("lorem ipsum dolor sit amet ", (20<<10)/27+1)
	for f := range 42 {
		rows := make([]schemas.ResultRow, 500)
		for k := range rows {
			i := f*500 + k
			resp := fmt.Sprintf("Marker %05d. ", i)
			rows[k] = schemas.ResultRow{RunID: runID, SampleID: fmt.Sprintf("s-%05d", i), SampleIndex: int64(i), Shard: int32(f),
				Model: "m", Response: resp + filler[:20<<10-len(resp)], Metrics: map[string]float64{"accuracy": 1}, Calls: 1, Attempts: 1}
		}
		w := pq.NewWriter[schemas.ResultRow](ctx, store, runs.ShardKey(runID, f), pq.Options{})
		if err := w.Write(rows); err != nil {
			b.Fatal(err)
		}
		if _, err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
	run := leaderboard.Run{RunID: runID, Dataset: "d", Model: "m", Summary: aggregate.Summary{Samples: 21000}}
	if err := site.ExplorerIndex(ctx, store, run, "accuracy"); err != nil {
		b.Fatal(err)
	}
	s := leaderboard.Scores{Board: "first", Stamp: "20261128T000000Z", Runs: []leaderboard.Run{run}}
	if err := blob.PutJSON(ctx, store, leaderboard.ScoresKey(s.Board, s.Stamp), s); err != nil {
		b.Fatal(err)
	}
	if err := blob.PutBytes(ctx, store, leaderboard.LatestKey(s.Board), []byte(s.Stamp)); err != nil {
		b.Fatal(err)
	}
	var total time.Duration
	round := 0
	for b.Loop() {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		srv := site.NewServer(site.Handler(store))
		go func() { _ = srv.Serve(ln) }()
		get := func(u string) string {
			resp, err := http.Get("http://" + ln.Addr().String() + u)
			if err != nil {
				b.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			return string(body)
		}
		get("/first/api/samples?run=" + runID + "&limit=50")
		i := 20977 - round
		start := time.Now()
		body := get(fmt.Sprintf("/first/api/samples?run=%s&q=marker+%05d.&limit=50", runID, i))
		total += time.Since(start)
		b.Logf("round %d: first search %v", round, time.Since(start))
		if !strings.Contains(body, fmt.Sprintf(`"id":"s-%05d"`, i)) {
			b.Fatalf("search for sample %d: %.200s", i, body)
		}
		_ = srv.Close()
		round++
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "first-search-ms")
}

// readFailure says why a read failed, without the addresses (the
// failures of many connections are counted together).
func readFailure(err error) string {
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return "nothing until the deadline"
	}
	return err.Error()
}
