package aggregate

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/schemas"
)

// shardReads is how many result shards Compute reads at once.
const shardReads = 8

// shardRows is what Compute takes from one result shard, in row order.
type shardRows struct {
	samples, calls, cacheHits, promptTokens, completionTokens int64
	usageUnknown, infraFailed, modelFailed, scored            int64
	costs                                                     []float64 // per row, summed in order by the caller
	latencies                                                 []float64
	errorsByClass, catN                                       map[string]int64
	overall                                                   map[string][]float64
	byCat                                                     map[string]map[string][]float64
	// With clusters, each value's cluster key, parallel to the values.
	overallKeys map[string][]string
	byCatKeys   map[string]map[string][]string
}

// eachShardInOrder reads every result shard of plan, up to shardReads at
// a time, and calls merge with each in shard order. An error is the one of
// the first shard in order that failed, naming it.
func eachShardInOrder(ctx context.Context, store blob.Store, plan runs.Plan, o Options, merge func(*shardRows)) error {
	ctx, cancel := context.WithCancel(ctx)
	type result struct {
		rows *shardRows
		err  error
	}
	n := plan.Shards
	done := make([]chan result, n)
	for i := range done {
		done[i] = make(chan result, 1)
	}
	window := make(chan struct{}, shardReads)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for i := range n {
			select {
			case window <- struct{}{}:
			case <-ctx.Done():
				return
			}
			go func() {
				key := runs.ShardKey(plan.RunID, i)
				rows, err := readShard(ctx, store, key, o)
				if err != nil {
					err = fmt.Errorf("aggregate: run %s: shard %d (%s): %w", plan.RunID, i, key, err)
				}
				done[i] <- result{rows, err}
			}()
		}
	}()
	defer func() {
		cancel() // the launcher may wait for a slot the loop no longer frees
		<-stopped
	}()
	for i := range n {
		var r result
		select {
		case r = <-done[i]:
		case <-ctx.Done():
			return ctx.Err()
		}
		if r.err != nil {
			return r.err
		}
		merge(r.rows)
		<-window
	}
	return nil
}

// readShard reads one result shard's projected columns.
func readShard(ctx context.Context, store blob.Store, key string, o Options) (*shardRows, error) {
	columns := resultColumns
	if o.Cluster != nil {
		columns = append(append([]string(nil), resultColumns...), clusterColumns...)
	}
	sr := &shardRows{errorsByClass: map[string]int64{}, catN: map[string]int64{},
		overall: map[string][]float64{}, byCat: map[string]map[string][]float64{}}
	if o.Cluster != nil {
		sr.overallKeys, sr.byCatKeys = map[string][]string{}, map[string]map[string][]string{}
	}
	err := pq.ReadArrow(ctx, store, key, columns, func(rec arrow.RecordBatch) error {
		var cerr error
		col := func(name string) arrow.Array {
			idx := rec.Schema().FieldIndices(name)
			if len(idx) == 0 {
				cerr = fmt.Errorf("%w: column %q missing", ErrBadShard, name)
				return array.MakeArrayOfNull(memory.DefaultAllocator, arrow.Null, int(rec.NumRows()))
			}
			return rec.Column(idx[0])
		}
		cat, ok1 := col("category").(*array.String)
		mets, ok2 := col("metrics").(*array.Map)
		errc, ok3 := col("error_class").(*array.String)
		calls, ok4 := col("calls").(*array.Int32)
		hits, ok5 := col("cache_hits").(*array.Int32)
		pt, ok6 := col("prompt_tokens").(*array.Int64)
		ct, ok7 := col("completion_tokens").(*array.Int64)
		cost, ok8 := col("cost_usd").(*array.Float64)
		lat, ok9 := col("latency_ms").(*array.Float64)
		if cerr != nil {
			return cerr
		}
		if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7 && ok8 && ok9) {
			return fmt.Errorf("%w: columns do not have the result_row v%d types", ErrBadShard, schemas.ResultRowTable.Version)
		}
		var ids, details *array.String
		if o.Cluster != nil {
			var ok10, ok11 bool
			ids, ok10 = col("sample_id").(*array.String)
			details, ok11 = col("details_json").(*array.String)
			if cerr != nil {
				return cerr
			}
			if !ok10 || !ok11 {
				return fmt.Errorf("%w: columns do not have the result_row v%d types", ErrBadShard, schemas.ResultRowTable.Version)
			}
		}
		keys, ok1 := mets.Keys().(*array.String)
		items, ok2 := mets.Items().(*array.Float64)
		if !ok1 || !ok2 {
			return fmt.Errorf("%w: metrics is not a map<string, double>", ErrBadShard)
		}
		for r := 0; r < int(rec.NumRows()); r++ {
			sr.samples++
			sr.calls += int64(calls.Value(r))
			sr.cacheHits += int64(hits.Value(r))
			sr.promptTokens += pt.Value(r)
			sr.completionTokens += ct.Value(r)
			sr.costs = append(sr.costs, cost.Value(r))
			if calls.Value(r) > 0 && pt.Value(r) == 0 && ct.Value(r) == 0 {
				sr.usageUnknown++
			}
			sr.latencies = append(sr.latencies, lat.Value(r))
			ec := errc.Value(r)
			if ec != "" {
				sr.errorsByClass[ec]++
			}
			if !schemas.Scored(ec) {
				sr.infraFailed++
				continue // reported, not scored
			}
			if ec != "" {
				sr.modelFailed++
			}
			sr.scored++
			c := cat.Value(r)
			sr.catN[c]++
			if sr.byCat[c] == nil {
				sr.byCat[c] = map[string][]float64{}
			}
			var ck string
			if o.Cluster != nil {
				ck = o.Cluster(schemas.ResultRow{SampleID: ids.Value(r), Category: c, ErrorClass: ec, DetailsJSON: details.Value(r)})
				if sr.byCatKeys[c] == nil {
					sr.byCatKeys[c] = map[string][]string{}
				}
			}
			start, end := mets.ValueOffsets(r)
			for j := start; j < end; j++ {
				name := keys.Value(int(j))
				v := items.Value(int(j))
				sr.overall[name] = append(sr.overall[name], v)
				sr.byCat[c][name] = append(sr.byCat[c][name], v)
				if o.Cluster != nil {
					sr.overallKeys[name] = append(sr.overallKeys[name], ck)
					sr.byCatKeys[c][name] = append(sr.byCatKeys[c][name], ck)
				}
			}
		}
		return nil
	})
	if errors.Is(err, pq.ErrNoColumn) {
		err = fmt.Errorf("%w: %w", ErrBadShard, err)
	}
	return sr, err
}
