package taskfile

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/benchmark"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/limits"
	"github.com/benchline/benchline/internal/sandbox/lang"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/scorers"
	task "github.com/benchline/benchline/scorers/taskfile"
	// lm-evaluation-harness tasks are task files with lmeval scorers.
	_ "github.com/benchline/benchline/scorers/lmeval"
	_ "github.com/benchline/benchline/scorers/promptfoo"
)

// Dynamic serves task files as benchmarks (benchmark.Dynamic): a builder
// for any name, and a version's task compiled from the task file it keeps
// (TaskFileKey), checked against the manifest's sha256 of it. Compiled
// tasks are kept for the most recent versions asked for. A task file with
// a code scorer runs its code in Sandbox (nil on workers without one,
// whose scoring of it then fails as an infrastructure error).
type Dynamic struct {
	Sandbox lang.Sandboxer

	mu    sync.Mutex
	tasks map[string]scorers.Task
	order []string
}

var _ benchmark.DynamicWithDeps = (*Dynamic)(nil)

// WithDeps implements benchmark.DynamicWithDeps: a Dynamic whose tasks run
// code in deps' sandbox.
func (*Dynamic) WithDeps(deps benchmark.Deps) benchmark.Dynamic {
	return &Dynamic{Sandbox: deps.Sandbox}
}

// cached is how many compiled task files a worker keeps.
const cached = 64

func (*Dynamic) Builder(name string) datasets.Builder { return Builder{Dataset: name} }
func (*Dynamic) Schema() schemas.Table                { return task.TaskRowTable }

// Task compiles the task file version m keeps.
func (d *Dynamic) Task(ctx context.Context, store blob.Store, m catalog.Manifest) (scorers.Task, error) {
	id := m.Name + "@" + m.Version
	d.mu.Lock()
	t, ok := d.tasks[id]
	d.mu.Unlock()
	if ok {
		return t, nil
	}
	if len(m.Sources) == 0 {
		return nil, fmt.Errorf("taskfile: %s: the manifest lists no task file", id)
	}
	key := TaskFileKey(m.Name, m.Version)
	rc, err := store.Get(ctx, key)
	if errors.Is(err, blob.ErrNotFound) {
		return nil, fmt.Errorf("taskfile: %s: its task file %s is missing: %w", id, key, catalog.ErrNoDataset)
	}
	if err != nil {
		return nil, fmt.Errorf("taskfile: read %s: %w", key, err)
	}
	raw, err := limits.ReadFile(rc, key, task.MaxFileBytes)
	rc.Close()
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(raw)
	if got := hex.EncodeToString(sum[:]); got != m.Sources[0].SHA256 {
		return nil, fmt.Errorf("taskfile: %s has sha256 %s, but the manifest's task file %s: the version is corrupt", key, got, m.Sources[0].SHA256)
	}
	c, err := task.Load(m.Sources[0].URI, raw)
	if err != nil {
		return nil, &datasets.InputError{File: key, Msg: err.Error()}
	}
	t = task.NewTaskWith(c, d.Sandbox)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.tasks == nil {
		d.tasks = map[string]scorers.Task{}
	}
	if _, ok := d.tasks[id]; !ok {
		if len(d.order) == cached {
			delete(d.tasks, d.order[0])
			d.order = d.order[1:]
		}
		d.order = append(d.order, id)
		d.tasks[id] = t
	}
	return t, nil
}
