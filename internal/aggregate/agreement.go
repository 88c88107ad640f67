package aggregate

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/judge"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/schemas"
)

var agreementColumns = []string{"details_json", "error_class"}

// Agreement computes how far each judge panel of a run agreed: it reads
// the panel ratings tasks store in their results' details (under
// judge.RatingsKey) from every result shard of the run and pools them by
// set and panel (judge.RunAgreement). Rows not scored (infrastructure
// failures, bad samples) are left out. A run whose task stores no ratings
// gives none. Compute calls it for runs with judges.
func Agreement(ctx context.Context, store blob.Store, plan runs.Plan) ([]judge.Agreement, error) {
	var all []judge.Ratings
	for i := range plan.Shards {
		key := runs.ShardKey(plan.RunID, i)
		err := pq.ReadArrow(ctx, store, key, agreementColumns, func(rec arrow.RecordBatch) error {
			details, ok1 := column(rec, "details_json").(stringColumn)
			errc, ok2 := column(rec, "error_class").(stringColumn)
			if !ok1 || !ok2 {
				return fmt.Errorf("%w: details_json and error_class must be strings", ErrBadShard)
			}
			for r := 0; r < int(rec.NumRows()); r++ {
				if !schemas.Scored(errc.Value(r)) {
					continue
				}
				rs, err := judge.RatingsOf(details.Value(r))
				if err != nil {
					return fmt.Errorf("row %d: %w", r, err)
				}
				all = append(all, rs...)
			}
			return nil
		})
		if errors.Is(err, pq.ErrNoColumn) {
			err = fmt.Errorf("%w: %w", ErrBadShard, err)
		}
		if err != nil {
			return nil, fmt.Errorf("aggregate: run %s: agreement: shard %d (%s): %w", plan.RunID, i, key, err)
		}
	}
	if len(all) == 0 {
		return nil, nil
	}
	return judge.RunAgreement(all), nil
}

// stringColumn is an Arrow string column of either width.
type stringColumn interface{ Value(i int) string }

// column returns rec's column called name, nil when it has none.
func column(rec arrow.RecordBatch, name string) arrow.Array {
	if idx := rec.Schema().FieldIndices(name); len(idx) > 0 {
		return rec.Column(idx[0])
	}
	return nil
}
