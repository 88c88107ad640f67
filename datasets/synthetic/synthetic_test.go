package synthetic_test

import (
	"context"
	"strings"
	"testing"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/synthetic"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/schemas"
)

func TestPlanSplitsRows(t *testing.T) {
	for _, tc := range []struct {
		params map[string]string
		parts  int
		last   int64
	}{
		{map[string]string{"rows": "10", "part_rows": "4"}, 3, 2},
		{map[string]string{"rows": "8", "part_rows": "4"}, 2, 4},
		{map[string]string{"rows": "0"}, 0, 0},
		{nil, 1, 1000},
	} {
		p, err := synthetic.Builder{}.Plan(context.Background(), datasets.Env{}, datasets.Request{Params: tc.params})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Parts) != tc.parts || (tc.parts > 0 && p.Parts[tc.parts-1].Rows != tc.last) {
			t.Errorf("%v: parts %+v", tc.params, p.Parts)
		}
	}
	// The delay is not part of the version.
	a, _ := synthetic.Builder{}.Plan(context.Background(), datasets.Env{}, datasets.Request{Params: map[string]string{"rows": "10"}})
	b, _ := synthetic.Builder{}.Plan(context.Background(), datasets.Env{}, datasets.Request{Params: map[string]string{"rows": "10", "delay_ms_per_10k": "5"}})
	c, _ := synthetic.Builder{}.Plan(context.Background(), datasets.Env{}, datasets.Request{Params: map[string]string{"rows": "11"}})
	if a.Version != b.Version || a.Version == c.Version {
		t.Errorf("versions: %s %s %s", a.Version, b.Version, c.Version)
	}
	for _, bad := range []map[string]string{{"rows": "-1"}, {"rows": "x"}, {"part_rows": "0"}, {"colour": "1"}} {
		if _, err := (synthetic.Builder{}).Plan(context.Background(), datasets.Env{}, datasets.Request{Params: bad}); err == nil || !strings.Contains(err.Error(), "synthetic") {
			t.Errorf("%v: err = %v", bad, err)
		}
	}
}

func TestWritePartIsPureAndComplete(t *testing.T) {
	ctx := context.Background()
	env := datasets.Env{Store: blobtest.NewMemory()}
	plan, err := synthetic.Builder{}.Plan(ctx, env, datasets.Request{Params: map[string]string{"rows": "2500", "part_rows": "1000"}})
	if err != nil {
		t.Fatal(err)
	}
	p := plan.Parts[2]
	first, err := synthetic.Builder{}.WritePart(ctx, env, plan, p, "a", func(int64) {})
	if err != nil {
		t.Fatal(err)
	}
	second, err := synthetic.Builder{}.WritePart(ctx, env, plan, p, "b", func(int64) {})
	if err != nil {
		t.Fatal(err)
	}
	if first.SHA256 != second.SHA256 || first.Rows != 500 {
		t.Fatalf("rewrite differs or wrong rows: %+v %+v", first, second)
	}
	rows, err := pq.ReadAll[schemas.SyntheticRow](ctx, env.Store, "a")
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		if r.Index != int64(2000+i) || r != synthetic.Row(1, r.Index) {
			t.Fatalf("row %d = %+v", i, r)
		}
	}
}
