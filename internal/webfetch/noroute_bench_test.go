package webfetch_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/shareddata"
	"github.com/benchline/benchline/internal/webfetch"
	scorer "github.com/benchline/benchline/scorers/reporteval"
)

// blackhole returns a loopback address whose connects hang until the
// dialer's time-out, as with no route: a socket listening with a backlog
// of 0 that never accepts, its one queue slot filled, drops later SYNs.
func blackhole(b *testing.B) string {
	b.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		b.Fatal(err)
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		b.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { syscall.Close(fd) })
	sa, _ := syscall.Getsockname(fd)
	addr := netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), uint16(sa.(*syscall.SockaddrInet4).Port)).String()
	for i := 0; i < 2; i++ { // fill the queue
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			b.Cleanup(func() { c.Close() })
		}
	}
	return addr
}

// reportURLs returns every cited URL of the original's 100 reports (with
// repeats across reports, as a run fetches them per sample).
func reportURLs(b *testing.B) [][]string {
	dir := shareddata.Require(b, "reporteval")
	f, err := os.Open(filepath.Join(dir, "qwen-reports.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var out [][]string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var r struct{ Report string }
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			b.Fatal(err)
		}
		var urls []string
		for _, u := range scorer.References(r.Report) {
			urls = append(urls, u)
		}
		out = append(out, urls)
	}
	return out
}

// BenchmarkNoRouteReportSources fetches the cited sources of the
// original's 100 reports (2,910 URLs) with every host resolved to a
// blackhole on loopback, as a worker with no route to the network does:
// 8 reports at a time, 4 sources of a report at a time (the task's
// JudgeConcurrency). "default" is a Fetcher with its defaults (5 s
// connect bound, the no-route breaker); "offline" is Config.Offline.
// The time per op is the run's time spent fetching. docs/PERFORMANCE.md
// records it.
func BenchmarkNoRouteReportSources(b *testing.B) {
	reports := reportURLs(b)
	hole := blackhole(b)
	resolve := map[string]string{}
	n := 0
	for _, urls := range reports {
		for _, u := range urls {
			n++
			if p, err := url.Parse(u); err == nil && p.Hostname() != "" {
				resolve[p.Hostname()] = hole
			}
		}
	}
	for _, tc := range []struct {
		name    string
		offline bool
	}{{"default", false}, {"offline", true}} {
		b.Run(tc.name, func(b *testing.B) {
			var unreachable, offline int
			for i := 0; i < b.N; i++ {
				f, err := webfetch.New(blobtest.NewMemory(), webfetch.Config{Resolve: resolve, AllowNets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, Offline: tc.offline})
				if err != nil {
					b.Fatal(err)
				}
				var mu sync.Mutex
				unreachable, offline = 0, 0
				sem := make(chan struct{}, 8)
				var wg sync.WaitGroup
				for _, urls := range reports {
					sem <- struct{}{}
					wg.Add(1)
					go func(urls []string) {
						defer func() { <-sem; wg.Done() }()
						inner := make(chan struct{}, scorer.JudgeConcurrency)
						var iw sync.WaitGroup
						for _, u := range urls {
							inner <- struct{}{}
							iw.Add(1)
							go func(u string) {
								defer func() { <-inner; iw.Done() }()
								r, err := f.Fetch(context.Background(), u)
								if err != nil {
									b.Error(err)
									return
								}
								mu.Lock()
								switch r.Status {
								case webfetch.Unreachable, webfetch.Timeout:
									unreachable++
								case webfetch.Offline:
									offline++
								}
								mu.Unlock()
							}(u)
						}
						iw.Wait()
					}(urls)
				}
				wg.Wait()
			}
			b.ReportMetric(float64(n), "sources")
			b.ReportMetric(float64(unreachable), "unreachable")
			b.ReportMetric(float64(offline), "offline")
		})
	}
}
