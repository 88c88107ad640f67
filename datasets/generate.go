package datasets

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/modelapi"
)

// Completer is the model gateway as builders see it (*gateway.Gateway).
type Completer interface {
	Complete(ctx context.Context, req modelapi.Request) (modelapi.Response, error)
}

// A Generator is a Builder whose rows depend on model calls made at build
// time (candidate replies sampled from models, say). It is an optional
// capability, found by type assertion; builders that call no models do not
// implement it.
//
// Its Plan validates the sources and derives the version id as every
// builder's does, but returns the plan with Generate units and no Parts.
// The BuildDataset workflow then runs Generate for every unit (in parallel,
// each its own activity with Env.Models set), then Finish, and then writes
// and publishes the parts as usual. Since the version id is known before
// any call, a version already published is reused without calling models.
type Generator interface {
	Builder
	// Generate makes the model calls of unit u of plan.Generate and saves
	// their outputs with SaveGenerated, which makes the unit done. The
	// activity gives Env.Models a response cache of the unit (at
	// GeneratedCachePrefix), so a retried unit does not pay again for the
	// calls an earlier attempt finished; progress reports calls done.
	// Errors are wrapped with the item and model they concern.
	Generate(ctx context.Context, env Env, plan Plan, u Part, progress func(done int64)) (Generated, error)
	// Finish plans the parts once every unit is done (see LoadGenerated):
	// it returns plan with the units' outputs added to Sources and with
	// Parts. It must not change the version id.
	Finish(ctx context.Context, env Env, plan Plan) (Plan, error)
}

// Generated summarises a generated unit. It travels through workflow
// history: counts and a content hash, never the outputs.
type Generated struct {
	Unit int `json:"unit"`
	// Source is the unit's output file, staged under its sha256 (so Build
	// and WritePart read it like any source) and listed with the version's
	// sources in its manifest.
	Source catalog.Source `json:"source"`
	// Outputs is how many outputs (e.g. candidate replies) the unit wrote;
	// Skipped how many calls gave none (the reasons are in the output).
	Outputs int64 `json:"outputs"`
	Skipped int64 `json:"skipped"`
	// Usage sums the unit's model calls (CacheHits: answered from the cache).
	Usage modelapi.Totals `json:"usage"`
}

// GeneratedKey is where the summary of a generated unit is kept. The
// unit's Label must identify everything that determines its calls (inputs,
// models, sampling settings), so that a build with the same label reuses
// the unit and one with other settings does not.
func GeneratedKey(dataset string, u Part) string {
	return fmt.Sprintf("staging/generated/%s/%s.json", dataset, u.Label)
}

// GeneratedCachePrefix is the prefix of the response cache segment of a
// unit (see gateway.OpenSegment).
func GeneratedCachePrefix(dataset string, u Part) string {
	return fmt.Sprintf("cache/build/%s/%s", dataset, u.Label)
}

// SaveGenerated stages data, the output of unit u, under its sha256 as the
// source called name, then writes the unit's summary at GeneratedKey: the
// summary is written last, so a unit is either done or redone. The first
// summary written wins: when two builds sharing a unit (same label) race,
// both get the first one's output, whatever the second's models answered.
func SaveGenerated(ctx context.Context, env Env, dataset string, u Part, name string, data []byte, g Generated) (Generated, error) {
	sum := sha256.Sum256(data)
	sha := hex.EncodeToString(sum[:])
	g.Unit = u.Index
	g.Source = catalog.Source{Name: name, URI: "store:" + StagedKey(sha), SHA256: sha, Bytes: int64(len(data))}
	if ok, err := blob.Exists(ctx, env.Store, StagedKey(sha)); err != nil {
		return g, fmt.Errorf("datasets: stage %s: %w", name, err)
	} else if !ok {
		if err := env.Store.Put(ctx, StagedKey(sha), bytes.NewReader(data), int64(len(data))); err != nil {
			return g, fmt.Errorf("datasets: stage %s: %w", name, err)
		}
	}
	b, err := json.MarshalIndent(g, "", "  ")
	if err != nil {
		return g, fmt.Errorf("datasets: save unit %d of %s: %w", u.Index, dataset, err)
	}
	err = env.Store.PutIfAbsent(ctx, GeneratedKey(dataset, u), bytes.NewReader(b), int64(len(b)))
	if errors.Is(err, blob.ErrExists) {
		first, ok, err := LoadGenerated(ctx, env.Store, dataset, u)
		if err == nil && !ok {
			err = fmt.Errorf("datasets: unit %d of %s: summary exists and then does not", u.Index, dataset)
		}
		return first, err
	}
	if err != nil {
		return g, fmt.Errorf("datasets: save unit %d of %s: %w", u.Index, dataset, err)
	}
	return g, nil
}

// LoadGenerated returns the summary of unit u if it is done.
func LoadGenerated(ctx context.Context, store blob.Store, dataset string, u Part) (Generated, bool, error) {
	var g Generated
	err := blob.GetJSON(ctx, store, GeneratedKey(dataset, u), &g)
	if errors.Is(err, blob.ErrNotFound) {
		return g, false, nil
	}
	if err != nil {
		return g, false, fmt.Errorf("datasets: read unit %d of %s: %w", u.Index, dataset, err)
	}
	return g, true, nil
}
