package leaderboard

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/internal/stats"
	"github.com/benchline/benchline/schemas"
)

// Samples are one run's per-sample values of one metric, from its result
// Parquet (scored rows only: schemas.Scored(row.ErrorClass)).
type Samples struct {
	RunID, Model string
	IDs          []string // sample ids (unique); may be nil when Indexes is set
	// Indexes are the samples' positions in the dataset version (unique).
	// Two runs that both have them are paired by index, otherwise by id:
	// every comparison is of runs of one dataset version, where a sample's
	// index and its id name the same row, and an index pairs without a
	// map of strings (a million-sample run's explorer index has no ids).
	// LoadSamples leaves them nil when two samples share an index (results
	// written without their positions): those runs pair by id.
	Indexes []int64
	Values  []float64 // the metric's value per sample
	// Clusters is the cluster key per sample; nil when the benchmark has
	// no clusters. An empty key makes its sample a cluster of its own.
	Clusters []string
}

// RankRange is a model's rank range on one benchmark: its best (Low) and
// worst (High) rank, 1 the top.
type RankRange struct{ Low, High int }

// ErrBadResults marks a run's results that cannot be compared: a sample
// twice, a value that is not a finite number (corrupt data, not retried).
var ErrBadResults = errors.New("leaderboard: bad run results")

// ErrNoMetric marks a metric that no scored sample of the run has.
var ErrNoMetric = errors.New("leaderboard: no such metric")

// LoadSamples reads runs/<runID>/results/*.parquet and returns metric's
// value for every scored sample that has it, in the order of the files
// (shard order) and rows. cluster maps a result row to its cluster key
// (nil: no clusters, Samples.Clusters is nil); it sees the row's SampleID,
// Category, Metrics, ErrorClass and DetailsJSON (only those columns are
// read).
//
// Errors: a run with no result file wraps blob.ErrNotFound; a sample id
// twice, or a NaN or infinite value, wraps ErrBadResults and names the
// file and sample; scored samples none of which has metric wrap
// ErrNoMetric and list the metrics they have. A run none of whose samples
// was scored gives no values and no error.
func LoadSamples(ctx context.Context, store blob.Store, runID, model, metric string, cluster func(schemas.ResultRow) string) (Samples, error) {
	s := Samples{RunID: runID, Model: model}
	if cluster != nil {
		s.Clusters = []string{}
	}
	prefix := runs.Dir(runID) + "results/"
	infos, err := store.List(ctx, prefix)
	if err != nil {
		return s, fmt.Errorf("leaderboard: run %s: list %s: %w", runID, prefix, err)
	}
	var keys []string
	for _, in := range infos {
		if strings.HasSuffix(in.Key, ".parquet") && !strings.Contains(strings.TrimPrefix(in.Key, prefix), "/") {
			keys = append(keys, in.Key)
		}
	}
	if len(keys) == 0 {
		return s, fmt.Errorf("leaderboard: run %s: no result files under %s: %w", runID, prefix, blob.ErrNotFound)
	}
	sort.Strings(keys)
	parts := make([]samplesPart, len(keys))
	if err := EachParallel(len(keys), func(k int) error {
		p, err := readSamplesPart(ctx, store, keys[k], metric, cluster)
		parts[k] = p
		if err != nil {
			return fmt.Errorf("leaderboard: run %s: %s: %w", runID, keys[k], err)
		}
		return nil
	}); err != nil {
		return s, err
	}
	where := make(map[string]int32, parts[0].n()*len(parts)) // sample id -> index of its file
	scored := 0
	others := map[string]bool{}
	for k, p := range parts {
		scored += p.scored
		for m := range p.others {
			others[m] = true
		}
		for n, id := range p.ids {
			if prev, dup := where[id]; dup {
				return s, fmt.Errorf("leaderboard: run %s: %w: sample %q is in %s and again in %s", runID, ErrBadResults, id, keys[prev], keys[k])
			}
			where[id] = int32(k)
			s.IDs = append(s.IDs, id)
			s.Indexes = append(s.Indexes, p.idx[n])
			s.Values = append(s.Values, p.values[n])
			if cluster != nil {
				s.Clusters = append(s.Clusters, p.clusters[n])
			}
		}
		parts[k] = samplesPart{}
	}
	if !UniqueIndexes(s.Indexes) {
		s.Indexes = nil // pair by id: results written without their positions
	}
	if scored > 0 && len(s.IDs) == 0 {
		names := make([]string, 0, len(others))
		for m := range others {
			names = append(names, m)
		}
		sort.Strings(names)
		return s, fmt.Errorf("%w: run %s: no scored sample has metric %q (it has %s)", ErrNoMetric, runID, metric, strings.Join(names, ", "))
	}
	return s, nil
}

// UniqueIndexes says whether no sample index is there twice (samples
// whose indexes are not unique cannot be paired by index).
func UniqueIndexes(idx []int64) bool {
	sorted := slices.Clone(idx)
	slices.Sort(sorted)
	for k := 1; k < len(sorted); k++ {
		if sorted[k] == sorted[k-1] {
			return false
		}
	}
	return true
}

// ReadConcurrency is how many result files LoadSamples (and the site's
// explorer index) read at once.
const ReadConcurrency = 4

// EachParallel calls fn(0..n-1) on ReadConcurrency goroutines and returns
// the first error (the others still finish their current call).
func EachParallel(n int, fn func(int) error) error {
	next := make(chan int)
	errs := make(chan error, ReadConcurrency)
	var wg sync.WaitGroup
	for range min(ReadConcurrency, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range next {
				if err := fn(k); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		}()
	}
	for k := 0; k < n; k++ {
		if len(errs) > 0 {
			break
		}
		next <- k
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

// samplesPart is what LoadSamples reads of one result file.
type samplesPart struct {
	ids      []string
	idx      []int64
	values   []float64
	clusters []string
	scored   int
	others   map[string]bool
}

func (p samplesPart) n() int { return len(p.ids) }

// readSamplesPart reads one result file's scored samples of metric.
func readSamplesPart(ctx context.Context, store blob.Store, key, metric string, cluster func(schemas.ResultRow) string) (samplesPart, error) {
	p := samplesPart{others: map[string]bool{}}
	add := func(r schemas.ResultRow) error {
		if !schemas.Scored(r.ErrorClass) {
			return nil
		}
		p.scored++
		v, ok := r.Metrics[metric]
		if !ok {
			for m := range r.Metrics {
				p.others[m] = true
			}
			return nil
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: %s: sample %q: %s is %v", ErrBadResults, key, r.SampleID, metric, v)
		}
		p.ids = append(p.ids, r.SampleID)
		p.idx = append(p.idx, r.SampleIndex)
		p.values = append(p.values, v)
		if cluster != nil {
			p.clusters = append(p.clusters, cluster(r))
		}
		return nil
	}
	// Read only the columns needed (not the responses): details too only
	// for a cluster function.
	if cluster != nil {
		return p, pq.ReadEach(ctx, store, key, func(rows []clusterRow) error {
			for _, r := range rows {
				if err := add(schemas.ResultRow{SampleID: r.SampleID, SampleIndex: r.SampleIndex, Category: r.Category, Metrics: r.Metrics, ErrorClass: r.ErrorClass, DetailsJSON: r.DetailsJSON}); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return p, pq.ReadEach(ctx, store, key, func(rows []sampleRow) error {
		for _, r := range rows {
			if err := add(schemas.ResultRow{SampleID: r.SampleID, SampleIndex: r.SampleIndex, Category: r.Category, Metrics: r.Metrics, ErrorClass: r.ErrorClass}); err != nil {
				return err
			}
		}
		return nil
	})
}

// sampleRow and clusterRow are the columns of schemas.ResultRow that
// LoadSamples reads (Parquet projection).
type sampleRow struct {
	SampleID    string             `parquet:"sample_id"`
	SampleIndex int64              `parquet:"sample_index"`
	Category    string             `parquet:"category,dict"`
	Metrics     map[string]float64 `parquet:"metrics"`
	ErrorClass  string             `parquet:"error_class,dict"`
}

type clusterRow struct {
	SampleID    string             `parquet:"sample_id"`
	SampleIndex int64              `parquet:"sample_index"`
	Category    string             `parquet:"category,dict"`
	Metrics     map[string]float64 `parquet:"metrics"`
	ErrorClass  string             `parquet:"error_class,dict"`
	DetailsJSON string             `parquet:"details_json"`
}

// Alpha is the level of the comparisons: a comparison is significant when
// its adjusted p-value is below it.
const Alpha = 0.05

// Methods of a Comparison.
const (
	MethodMcNemar   = "mcnemar"
	MethodBootstrap = "paired-bootstrap"
	// MethodNone is a comparison of runs that share no scored sample.
	MethodNone = "none"
)

// Seed is the seed of every comparison's bootstrap: a comparison is a
// pure function of its two runs' samples (and of how many comparisons the
// benchmark has, which sets the resamples; see Resamples).
const Seed = 1

// Resamples is the number of bootstrap resamples of a benchmark with m
// comparisons: at least stats.DefaultResamples, and 40·m, so that the
// smallest bootstrap p-value, 1/(B+1), still passes Holm's correction with
// room to spare (m/(B+1) < Alpha/2).
func Resamples(m int) int { return max(stats.DefaultResamples, 40*m) }

// Compare compares every two runs of one benchmark's headline metric on the
// samples both scored (paired by sample index when both runs carry
// Indexes, by sample id otherwise), corrects the p-values over the
// benchmark's comparisons (Holm), and returns the comparisons (runs[i]
// against runs[j] for i < j, in that order; A is runs[i]) and each model's
// rank range (by Model: one run per model). Higher values are better.
//
// The test: when every paired value of both runs is 0 or 1 and the
// benchmark has no clusters, the exact McNemar test; otherwise the paired
// bootstrap of the mean difference, resampling clusters when the runs
// carry cluster keys (McNemar assumes independent pairs, so clustered
// pass/fail samples get the cluster bootstrap too). The difference's 95%
// interval is always the paired (cluster) bootstrap's percentile interval.
// The cluster key of a pair is runs[i]'s (both runs read the same dataset
// version). Comparisons of runs sharing no sample have Method "none", P
// and PAdjusted 1, and are left out of the correction.
func Compare(dataset, metric string, runs []Samples) ([]Comparison, map[string]RankRange) {
	pairs := Pairs(len(runs))
	boot := stats.Bootstrap{Resamples: Resamples(len(pairs)), Seed: Seed}
	index := make([]*lookup, len(runs))
	for k := range runs {
		index[k] = &lookup{s: &runs[k]}
	}
	for _, p := range pairs { // built here: the goroutines below only read them
		index[p.J].build(byIndex(runs[p.I], runs[p.J]))
	}
	// The comparisons are independent (each its own seeded generator):
	// run them on every core; the result does not depend on the order.
	out := make([]Comparison, len(pairs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(pairs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range next {
				p := pairs[k]
				out[k] = compare(dataset, metric, runs[p.I], runs[p.J], index[p.J], boot)
			}
		}()
	}
	for k := range pairs {
		next <- k
	}
	close(next)
	wg.Wait()
	models := make([]string, len(runs))
	for k, r := range runs {
		models[k] = r.Model
	}
	return out, Correct(models, pairs, out)
}

// Pair is a comparison of runs I and J (I < J) of a benchmark.
type Pair struct{ I, J int }

// Pairs lists the comparisons of n runs in Compare's order.
func Pairs(n int) []Pair {
	var pairs []Pair
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			pairs = append(pairs, Pair{i, j})
		}
	}
	return pairs
}

// Correct adjusts the p-values of one benchmark's comparisons (Holm, over
// those with N > 0), sets Significant, and returns each model's rank range
// (models[k] is run k's model).
func Correct(models []string, pairs []Pair, out []Comparison) map[string]RankRange {
	var tested []int // indices of the comparisons in the family
	var ps []float64
	for k, c := range out {
		if c.N > 0 {
			tested = append(tested, k)
			ps = append(ps, c.P)
		}
	}
	var orders []stats.Order
	for k, adj := range stats.Holm(ps) {
		c := &out[tested[k]]
		c.PAdjusted = adj
		c.Significant = adj < Alpha && c.Diff != 0
		if c.Significant {
			p := pairs[tested[k]]
			if c.Diff > 0 {
				orders = append(orders, stats.Order{Better: p.I, Worse: p.J})
			} else {
				orders = append(orders, stats.Order{Better: p.J, Worse: p.I})
			}
		}
	}
	ranks := map[string]RankRange{}
	for k, r := range stats.RankRanges(len(models), orders) {
		ranks[models[k]] = RankRange{Low: r.Low, High: r.High}
	}
	return ranks
}

// byIndex says whether runs a and b pair by sample index (both have
// Indexes) rather than by id.
func byIndex(a, b Samples) bool { return a.Indexes != nil && b.Indexes != nil }

// lookup finds a run's samples by the other run's pairing keys: by index
// or by id (see Samples.Indexes), each built on first use.
type lookup struct {
	s      *Samples
	dense  []int32        // position+1 by sample index, when the indexes are dense enough
	sparse map[int64]int  // position by sample index, otherwise
	ids    map[string]int // position by id
}

func (l *lookup) build(index bool) {
	switch {
	case index && l.dense == nil && l.sparse == nil:
		hi := int64(-1)
		for _, i := range l.s.Indexes {
			hi = max(hi, i)
		}
		// A dense table while it costs at most about 4 bytes a sample
		// more than the samples themselves; a map for anything else (a
		// corrupt index must not size an allocation).
		if hi < int64(4*len(l.s.Indexes))+1024 {
			l.dense = make([]int32, hi+1)
			for n, i := range l.s.Indexes {
				if i >= 0 {
					l.dense[i] = int32(n + 1)
				}
			}
			return
		}
		l.sparse = make(map[int64]int, len(l.s.Indexes))
		for n, i := range l.s.Indexes {
			l.sparse[i] = n
		}
	case !index && l.ids == nil:
		l.ids = make(map[string]int, len(l.s.IDs))
		for n, id := range l.s.IDs {
			l.ids[id] = n
		}
	}
}

// find returns the position of a's sample n in l's run.
func (l *lookup) find(a Samples, n int, index bool) (int, bool) {
	if !index {
		m, ok := l.ids[a.IDs[n]]
		return m, ok
	}
	i := a.Indexes[n]
	if l.dense != nil {
		if i < 0 || i >= int64(len(l.dense)) || l.dense[i] == 0 {
			return 0, false
		}
		return int(l.dense[i]) - 1, true
	}
	m, ok := l.sparse[i]
	return m, ok
}

// compare is one comparison of Compare: ra against rb on the samples both
// scored (bIndex finds rb's samples; built for this pair's pairing key).
func compare(dataset, metric string, ra, rb Samples, bIndex *lookup, boot stats.Bootstrap) Comparison {
	c := Comparison{Dataset: dataset, Metric: metric, ModelA: ra.Model, ModelB: rb.Model, RunA: ra.RunID, RunB: rb.RunID,
		Correction: "holm", P: 1, PAdjusted: 1, Method: MethodNone}
	var a, b []float64
	var cl []string
	index := byIndex(ra, rb)
	if !index && (ra.IDs == nil || rb.IDs == nil) {
		return c // nothing to pair by (Indexes on one side only): no shared sample
	}
	for n := range ra.Values {
		m, ok := bIndex.find(ra, n, index)
		if !ok {
			continue
		}
		a = append(a, ra.Values[n])
		b = append(b, rb.Values[m])
		switch {
		case ra.Clusters != nil:
			cl = append(cl, ra.Clusters[n])
		case rb.Clusters != nil:
			cl = append(cl, rb.Clusters[m])
		}
	}
	c.N = int64(len(a))
	if len(a) == 0 {
		return c
	}
	var sumA, sumB float64
	for n := range a {
		sumA += a[n]
		sumB += b[n]
		switch {
		case a[n] > b[n]:
			c.ABetter++
		case a[n] < b[n]:
			c.BBetter++
		default:
			c.Ties++
		}
	}
	c.MeanA, c.MeanB = sumA/float64(len(a)), sumB/float64(len(a))
	pb := stats.PairedBootstrap(a, b, cl, boot)
	c.Diff, c.CILow, c.CIHigh = pb.Diff, pb.CILow, pb.CIHigh
	if cl != nil {
		c.Clusters = int64(pb.Clusters)
	}
	if cl == nil && stats.Binary(a) && stats.Binary(b) {
		c.Method, c.P = MethodMcNemar, stats.McNemarPaired(a, b).P
	} else {
		c.Method, c.P = MethodBootstrap, pb.P
	}
	return c
}
