package datasets_test

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/catalog"
)

func TestRequestSeed(t *testing.T) {
	// The bytes hashed: the domain, a zero byte, each value big-endian.
	// toolpref's sample seeds were this before the helper; they must not
	// change, or stored units would be sampled again.
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], 7)
	binary.BigEndian.PutUint64(b[8:], 3)
	sum := sha256.Sum256(append([]byte("toolpref sample seed\x00"), b[:]...))
	want := int(binary.BigEndian.Uint32(sum[:4]) >> 1)
	if got := datasets.RequestSeed("toolpref sample seed", 7, 3); got != want {
		t.Errorf("RequestSeed = %d, want %d", got, want)
	}
	if datasets.RequestSeed("a", 1) == datasets.RequestSeed("b", 1) || datasets.RequestSeed("a", 1) == datasets.RequestSeed("a", 2) {
		t.Error("seeds collide across domains or values")
	}
	if s := datasets.RequestSeed("a", 1<<63); s < 0 || s >= 1<<31 {
		t.Errorf("seed %d is not 31 bits", s)
	}
}

func TestEachCall(t *testing.T) {
	var calls, last atomic.Int64
	err := datasets.EachCall(context.Background(), 40, func(done int64) { last.Store(max(last.Load(), done)) },
		func(context.Context, int) error { calls.Add(1); return nil })
	if err != nil || calls.Load() != 40 || last.Load() != 40 {
		t.Fatalf("err %v, %d calls, progress %d", err, calls.Load(), last.Load())
	}
	boom := errors.New("boom")
	err = datasets.EachCall(context.Background(), 40, func(int64) {}, func(_ context.Context, i int) error {
		if i == 5 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) {
		t.Errorf("err = %v, want the call's", err)
	}
}

func TestUnits(t *testing.T) {
	got := datasets.Units("abc", 8, 3)
	want := []datasets.Part{{Index: 0, Label: "abc/unit-00000", Start: 0, Rows: 3},
		{Index: 1, Label: "abc/unit-00001", Start: 3, Rows: 3}, {Index: 2, Label: "abc/unit-00002", Start: 6, Rows: 2}}
	if len(got) != len(want) {
		t.Fatalf("Units = %+v", got)
	}
	for i := range want {
		if got[i].Index != want[i].Index || got[i].Label != want[i].Label || got[i].Start != want[i].Start || got[i].Rows != want[i].Rows {
			t.Errorf("unit %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if len(datasets.Units("x", 0, 3)) != 0 {
		t.Error("units for no items")
	}
}

func TestAllParamsAndFinishSources(t *testing.T) {
	plan := datasets.Plan{Dataset: "d", Params: map[string]string{"a": "1"}, Runtime: map[string]string{"unit": "4"},
		Sources:  []catalog.Source{{Name: "items.jsonl"}, {Name: "gen/unit-00000.jsonl"}},
		Generate: []datasets.Part{{Index: 0, Label: "x/unit-00000"}}}
	if p := plan.AllParams(); len(p) != 2 || p["a"] != "1" || p["unit"] != "4" {
		t.Errorf("AllParams = %v", p)
	}
	ctx := context.Background()
	env := datasets.Env{Store: blobtest.NewMemory()}
	isGen := func(n string) bool { return strings.HasPrefix(n, "gen/") }
	if _, err := datasets.FinishSources(ctx, env, plan, isGen); err == nil || !strings.Contains(err.Error(), "has not been generated") {
		t.Fatalf("err = %v for a unit not done", err)
	}
	g, err := datasets.SaveGenerated(ctx, env, "d", plan.Generate[0], "gen/unit-00000.jsonl", []byte("x\n"), datasets.Generated{})
	if err != nil {
		t.Fatal(err)
	}
	srcs, err := datasets.FinishSources(ctx, env, plan, isGen)
	if err != nil || len(srcs) != 2 || srcs[0].Name != "items.jsonl" || srcs[1] != g.Source {
		t.Errorf("FinishSources = %+v, %v; want the items, then the unit's output once", srcs, err)
	}
}
