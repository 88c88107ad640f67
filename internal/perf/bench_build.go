package perf

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/registry"
)

// BuildBench is the result of a timed in-process build.
type BuildBench struct {
	Dataset     string  `json:"dataset"`
	Version     string  `json:"version"`
	Rows        int64   `json:"rows"`
	Files       int     `json:"files"`
	Bytes       int64   `json:"bytes"`
	Seconds     float64 `json:"seconds"`
	RowsPerSec  float64 `json:"rows_per_sec"`
	MBPerSec    float64 `json:"mb_per_sec"`
	PeakRSSMB   float64 `json:"peak_rss_mb"`
	HeapPeakMB  float64 `json:"heap_peak_mb"`
	Parallelism int     `json:"parallelism"`
}

// BenchBuild plans and writes a dataset in this process (no Temporal), the
// same builder code the activities run, and measures it: rows/s and MB/s of
// Parquet written to the store, and peak memory.
func BenchBuild(ctx context.Context, store blob.Store, env datasets.Env, dataset string, req datasets.Request, parallel int) (BuildBench, error) {
	b, err := registry.Default().Builder(dataset)
	if err != nil {
		return BuildBench{}, err
	}
	if parallel <= 0 {
		parallel = 1
	}
	var heapPeak uint64
	stopSample := sampleHeap(&heapPeak)
	start := time.Now()
	plan, err := b.Plan(ctx, env, req)
	if err != nil {
		stopSample()
		return BuildBench{}, err
	}
	if len(plan.Generate) > 0 {
		stopSample()
		return BuildBench{}, fmt.Errorf("bench build: %s would call models (%d generation units); it measures the pipeline only, build it with `benchline dataset build`", dataset, len(plan.Generate))
	}
	// The bench writes under bench/ so it never touches published versions.
	plan.Dataset = "bench-" + plan.Dataset
	res := BuildBench{Dataset: dataset, Version: plan.Version, Files: len(plan.Parts), Parallelism: parallel}
	var mu sync.Mutex
	var firstErr error
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for _, p := range plan.Parts {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			key := fmt.Sprintf("bench/%s/%s/part-%05d.parquet", dataset, plan.Version, p.Index)
			info, err := b.WritePart(ctx, env, plan, p, key, func(int64) {})
			mu.Lock()
			defer mu.Unlock()
			if err != nil && firstErr == nil {
				firstErr = err
			}
			res.Rows += info.Rows
			res.Bytes += info.Bytes
		}()
	}
	wg.Wait()
	res.Seconds = time.Since(start).Seconds()
	stopSample()
	if firstErr != nil {
		return res, firstErr
	}
	res.RowsPerSec = float64(res.Rows) / res.Seconds
	res.MBPerSec = float64(res.Bytes) / 1e6 / res.Seconds
	res.PeakRSSMB = peakRSSMB()
	res.HeapPeakMB = float64(heapPeak) / (1 << 20)
	return res, nil
}

func sampleHeap(peak *uint64) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > *peak {
				*peak = ms.HeapInuse
			}
			select {
			case <-t.C:
			case <-done:
				return
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// peakRSSMB reads the process's peak resident set (VmHWM) from /proc.
func peakRSSMB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			f := strings.Fields(line)
			if len(f) >= 2 {
				kb, _ := strconv.ParseFloat(f[1], 64)
				return kb / 1024
			}
		}
	}
	return 0
}
