package datasets_test

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/blob"
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

func TestUnitOf(t *testing.T) {
	plan := datasets.Plan{Dataset: "d"}
	items := []string{"a", "b", "c", "d", "e"}
	tests := []struct {
		start, rows int64
		want        string // the unit's items, or the error
	}{
		{0, 2, "[a b]"},
		{3, 2, "[d e]"},
		{5, 0, "[]"},
		{4, 2, "d: unit 7 covers items [4, 6), the sources have 5"},
		{-1, 2, "d: unit 7 covers items [-1, 1), the sources have 5"},
		{2, -1, "d: unit 7 covers items [2, 1), the sources have 5"},
	}
	for _, tc := range tests {
		got, err := datasets.UnitOf(plan, datasets.Part{Index: 7, Start: tc.start, Rows: tc.rows}, items, "items")
		s := fmt.Sprint(got)
		if err != nil {
			s = err.Error()
		}
		if s != tc.want {
			t.Errorf("UnitOf [%d, +%d) = %s, want %s", tc.start, tc.rows, s, tc.want)
		}
	}
}

func TestSaveLines(t *testing.T) {
	type line struct {
		ID   string  `json:"id"`
		Text string  `json:"text"`
		X    float64 `json:"x"`
	}
	ctx := context.Background()
	env := datasets.Env{Store: blobtest.NewMemory()}
	plan := datasets.Plan{Dataset: "d"}
	u := datasets.Part{Index: 3, Label: "g/unit-00003"}
	name := func(l line) string { return "the line for " + l.ID }
	lines := []line{{"a", "<b> & 'c'", 1}, {"z", "é", 0.5}}
	g, err := datasets.SaveLines(ctx, env, plan, u, "gen/", lines, name, datasets.Generated{Outputs: 2, Skipped: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := "{\"id\":\"a\",\"text\":\"<b> & 'c'\",\"x\":1}\n{\"id\":\"z\",\"text\":\"é\",\"x\":0.5}\n"
	if g.Unit != 3 || g.Outputs != 2 || g.Skipped != 1 || g.Source.Name != "gen/unit-00003.jsonl" || g.Source.Bytes != int64(len(want)) {
		t.Errorf("summary %+v", g)
	}
	got, err := blob.GetBytes(ctx, env.Store, datasets.StagedKey(g.Source.SHA256))
	if err != nil || string(got) != want {
		t.Errorf("staged %q, %v; want %q (one line each, HTML as it is)", got, err, want)
	}
	if done, ok, err := datasets.LoadGenerated(ctx, env.Store, "d", u); err != nil || !ok || done != g {
		t.Errorf("LoadGenerated = %+v, %v, %v; want the unit done", done, ok, err)
	}
	bad := []line{{"a", "", 1}, {"q", "", math.NaN()}}
	u2 := datasets.Part{Index: 4, Label: "g/unit-00004"}
	if _, err := datasets.SaveLines(ctx, env, plan, u2, "gen/", bad, name, datasets.Generated{}); err == nil ||
		!strings.HasPrefix(err.Error(), "d: encode the line for q: json: unsupported value: NaN") {
		t.Errorf("err = %v, want the line named", err)
	}
	if _, ok, _ := datasets.LoadGenerated(ctx, env.Store, "d", u2); ok {
		t.Error("a unit whose lines did not encode is done")
	}
}

func TestOnePart(t *testing.T) {
	srcs := []catalog.Source{{Name: "a", SHA256: "01"}, {Name: "b", SHA256: "02"}}
	p := datasets.OnePart("items", srcs, 9)
	if fmt.Sprintf("%+v", p) != "{Index:0 Label:items Inputs:[01 02] Start:0 Rows:9}" {
		t.Errorf("OnePart = %+v", p)
	}
	if in := datasets.Inputs(nil); in != nil {
		t.Errorf("Inputs(nil) = %#v, want nil (omitted from the plan's JSON, as before)", in)
	}
}
