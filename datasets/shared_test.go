package datasets_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/pq"
)

func TestEachLine(t *testing.T) {
	long := strings.Repeat("x", 3<<20) // longer than the reader's buffer
	in := "a\n\n  \n" + long + "\nlast-without-newline"
	var got []string
	err := datasets.EachLine(strings.NewReader(in), "mem://f", func(n int, raw []byte) error {
		got = append(got, fmt.Sprintf("%d:%d", n, len(strings.TrimSpace(string(raw)))))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("[1:1 4:%d 5:20]", len(long))
	if fmt.Sprint(got) != want {
		t.Fatalf("lines %v, want %v (blank lines skipped, numbers kept)", got, want)
	}
	stop := errors.New("stop")
	if err := datasets.EachLine(strings.NewReader("a\nb\n"), "mem://f", func(int, []byte) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("callback error not returned: %v", err)
	}
}

func TestWriteRows(t *testing.T) {
	type row struct {
		N int64 `parquet:"n"`
	}
	rows := make([]row, 1000)
	for i := range rows {
		rows[i].N = int64(i)
	}
	env := datasets.Env{Store: blobtest.NewMemory()}
	var progress []int64
	info, err := datasets.WriteRows(context.Background(), env, "k", rows, map[string]string{"a": "b"}, func(n int64) { progress = append(progress, n) })
	if err != nil {
		t.Fatal(err)
	}
	if info.Rows != 1000 || fmt.Sprint(progress) != "[256 512 768 1000]" {
		t.Fatalf("info %+v, progress %v", info, progress)
	}
	back, err := pq.ReadAll[row](context.Background(), env.Store, "k")
	if err != nil || len(back) != 1000 || back[999].N != 999 {
		t.Fatalf("read back %d rows: %v", len(back), err)
	}
}

func TestPartSources(t *testing.T) {
	plan := datasets.Plan{Dataset: "d", Sources: []catalog.Source{{Name: "a", SHA256: "aa"}, {Name: "b", SHA256: "bb"}}}
	got, err := datasets.PartSources(plan, datasets.Part{Label: "p", Inputs: []string{"bb", "aa"}})
	if err != nil || len(got) != 2 || got[0].Name != "b" || got[1].Name != "a" {
		t.Fatalf("PartSources = %v, %v; want b, a in the inputs' order", got, err)
	}
	if _, err := datasets.PartSources(plan, datasets.Part{Label: "p", Inputs: []string{"aa", "cc"}}); err == nil ||
		!strings.Contains(err.Error(), "d: part p: input cc is not among the plan's sources") {
		t.Fatalf("missing input: err = %v", err)
	}
}
