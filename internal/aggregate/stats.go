// Package aggregate turns an evaluation run's result shards into its
// summary: per metric the mean, the standard error and a 95% confidence
// interval, overall and per category; error counts by class; tokens, cost
// and latency percentiles.
package aggregate

import (
	"fmt"
	"sort"

	"github.com/benchline/benchline/internal/stats"
	"github.com/benchline/benchline/schemas"
)

// MetricStat summarises one metric over a set of samples.
type MetricStat struct {
	Name   string  `json:"name"`
	N      int     `json:"n"`
	Mean   float64 `json:"mean"`
	StdErr float64 `json:"stderr"`
	CILow  float64 `json:"ci_low"`
	CIHigh float64 `json:"ci_high"`
	// CIMethod is "bootstrap" (percentile, seeded) or "normal" (mean ±
	// 1.96·stderr, used above BootstrapMaxN samples where the two agree);
	// for a benchmark with clusters, "cluster-bootstrap" (whole clusters
	// resampled) or "cluster-normal", with StdErr the CR1 clustered
	// standard error (docs/statistics.md).
	CIMethod string `json:"ci_method"`
	// Clusters is the number of clusters G of a benchmark with clusters
	// (Options.Cluster); 0 without. Below 2 the statistics are the
	// unclustered ones: a clustered error cannot be estimated.
	Clusters int `json:"clusters,omitempty"`
}

// NoSamples is what printers show instead of the mean, interval and
// standard error of a metric with N = 0 (whose fields are zeros).
const NoSamples = "no samples"

// MeanText is the mean with four decimals, or NoSamples when N = 0.
func (m MetricStat) MeanText() string {
	if m.N == 0 {
		return NoSamples
	}
	return fmt.Sprintf("%.4f", m.Mean)
}

// CIText is the interval as "[low, high]", or "-" when N = 0.
func (m MetricStat) CIText() string {
	if m.N == 0 {
		return "-"
	}
	return fmt.Sprintf("[%.4f, %.4f]", m.CILow, m.CIHigh)
}

// StdErrText is the standard error, or "-" when N = 0.
func (m MetricStat) StdErrText() string {
	if m.N == 0 {
		return "-"
	}
	return fmt.Sprintf("%.4f", m.StdErr)
}

// Options tune the statistics.
type Options struct {
	Resamples     int    // bootstrap resamples [stats.DefaultResamples]
	Seed          uint64 // bootstrap seed [1]
	BootstrapMaxN int    // above this many samples use the normal interval [20000]
	// Cluster, when set, is the benchmark's cluster key of a result row
	// (benchmark.Benchmark.Cluster): Compute then computes every metric's
	// standard error and interval by cluster (ClusterStat). It sees the
	// row's SampleID, Category, ErrorClass and DetailsJSON, and is called
	// from several goroutines at once.
	Cluster func(schemas.ResultRow) string
}

func (o Options) withDefaults() Options {
	if o.Resamples <= 0 {
		o.Resamples = stats.DefaultResamples
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.BootstrapMaxN <= 0 {
		o.BootstrapMaxN = 20000
	}
	return o
}

// Stat computes the statistics of xs. The result is a pure function of xs
// and o, so a summary recomputed from the same shards is identical. The
// interval is internal/stats' percentile bootstrap of the mean
// (stats.BootstrapMean: o.Resamples resamples of n drawn with replacement,
// by index, or by counts when xs takes few distinct values), the one
// bootstrap of the code base.
func Stat(name string, xs []float64, o Options) MetricStat {
	o = o.withDefaults()
	s := MetricStat{Name: name, N: len(xs)}
	if len(xs) == 0 {
		// Zeros, not NaN: JSON has no NaN. N = 0 and CIMethod "none" say it.
		s.CIMethod = "none"
		return s
	}
	s.Mean, s.StdErr, _ = stats.ClusteredSE(xs, nil) // without clusters: s/√n
	if len(xs) > o.BootstrapMaxN {
		s.CIMethod = "normal"
		s.CILow, s.CIHigh = s.Mean-1.96*s.StdErr, s.Mean+1.96*s.StdErr
		return s
	}
	s.CIMethod = "bootstrap"
	b := stats.BootstrapMean(xs, nil, stats.Bootstrap{Resamples: o.Resamples, Seed: o.Seed})
	s.CILow, s.CIHigh = b.CILow, b.CIHigh
	return s
}

// ClusterStat computes the statistics of xs whose samples share clusters
// (keys[i] is xs[i]'s cluster; "" a cluster of its own; nil: no clusters,
// as Stat). The standard error is CR1's, G/(G−1)·Σ_g(Σ_{i∈g}(x_i−x̄))²/n²
// under the root; the interval is the percentile cluster bootstrap
// (o.Resamples resamples of the G clusters, seeded with o.Seed), or mean ±
// 1.96·SE above o.BootstrapMaxN samples. With fewer than 2 clusters it is
// Stat's result with Clusters set. A pure function of xs, keys and o.
func ClusterStat(name string, xs []float64, keys []string, o Options) MetricStat {
	if keys == nil {
		return Stat(name, xs, o)
	}
	o = o.withDefaults()
	m, se, g := stats.ClusteredSE(xs, keys)
	if g < 2 {
		s := Stat(name, xs, o)
		s.Clusters = g
		return s
	}
	s := MetricStat{Name: name, N: len(xs), Mean: m, StdErr: se, Clusters: g}
	if len(xs) > o.BootstrapMaxN {
		s.CIMethod = "cluster-normal"
		s.CILow, s.CIHigh = m-1.96*se, m+1.96*se
		return s
	}
	b := stats.BootstrapMean(xs, keys, stats.Bootstrap{Resamples: o.Resamples, Seed: o.Seed})
	s.CIMethod = "cluster-bootstrap"
	s.CILow, s.CIHigh = b.CILow, b.CIHigh
	return s
}

// Percentiles returns the p50, p90 and p99 of xs (which it sorts).
func Percentiles(xs []float64) (p50, p90, p99 float64) {
	sort.Float64s(xs)
	return stats.Quantile(xs, 0.5), stats.Quantile(xs, 0.9), stats.Quantile(xs, 0.99)
}
