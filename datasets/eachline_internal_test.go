package datasets

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/limits"
	"github.com/benchline/benchline/internal/source"
)

// endless is a line that never ends: 'a' forever, counting what is read.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	e.n += int64(len(p))
	return len(p), nil
}

// TestEachLineBoundsTheLine: a line over the limit is an *InputError
// naming the file and the line, returned once the limit is passed (the
// rest is never read); lines at the limit, and longer than the reader's
// buffer, pass whole.
func TestEachLineBoundsTheLine(t *testing.T) {
	const max = 1 << 20
	t.Run("endless line", func(t *testing.T) {
		src := &endless{}
		r := io.MultiReader(strings.NewReader("{\"ok\": 1}\n"), src)
		var seen []int
		err := eachLine(r, "mem://big.json", max, func(n int, raw []byte) error { seen = append(seen, n); return nil })
		var ie *InputError
		if !errors.As(err, &ie) || ie.File != "mem://big.json" || ie.Line != 2 || !strings.Contains(ie.Msg, "limits.max_line_bytes") {
			t.Fatalf("err = %v, want an *InputError for mem://big.json line 2 naming the setting", err)
		}
		if src.n > max+1<<20 {
			t.Errorf("read %d bytes of the endless line; the limit is %d", src.n, max)
		}
		if len(seen) != 1 || seen[0] != 1 {
			t.Errorf("fn saw lines %v, want [1]", seen)
		}
	})
	for _, n := range []int{max - 1, 200 << 10, 64<<10 + 3} { // with its newline, at most max
		body := strings.Repeat("b", n) + "\n" + "c\n"
		var got []int
		err := eachLine(strings.NewReader(body), "mem://f", max, func(_ int, raw []byte) error { got = append(got, len(raw)); return nil })
		if err != nil || len(got) != 2 || got[0] != n+1 || got[1] != 2 {
			t.Errorf("a %d-byte line: err %v, line lengths %v", n, err, got)
		}
	}
	// One byte over, without a final newline, is refused too.
	err := eachLine(strings.NewReader(strings.Repeat("d", max+1)), "mem://g", max, func(int, []byte) error { return nil })
	var ie *InputError
	if !errors.As(err, &ie) || ie.Line != 1 {
		t.Errorf("a line of max+1 bytes: %v", err)
	}
}

// TestStageBoundsTheLine: Stage refuses a text source with a line over
// the limit while copying it, naming the file and line, without storing
// anything; a binary source (by name) is not read as lines.
func TestStageBoundsTheLine(t *testing.T) {
	defer limits.Set(limits.Limits{})
	limits.Set(limits.Limits{LineBytes: 4096})
	dir := t.TempDir()
	big := "ok\n" + strings.Repeat("x", 4096) + "\n"
	for _, name := range []string{"a.json", "b.parquet"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(big), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	loc, err := source.Parse(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	store := blobtest.NewMemory()
	env := Env{Store: store}
	_, err = Stage(context.Background(), env, loc, "a.json")
	var ie *InputError
	if !errors.As(err, &ie) || ie.Line != 2 || ie.File != filepath.Join(dir, "a.json") {
		t.Fatalf("Stage of a 4097-byte line at a 4096 limit: %v", err)
	}
	if infos, _ := store.List(context.Background(), ""); len(infos) != 0 {
		t.Errorf("Stage stored %v", infos)
	}
	if _, err := Stage(context.Background(), env, loc, "b.parquet"); err != nil {
		t.Errorf("a binary source: %v", err)
	}
	g := &lineGuard{uri: "u", max: 4, line: 1}
	for _, chunk := range []string{"ab", "c\n", "abcd", ""} { // "abc\n" is 4 bytes: fine; "abcd" + more is not
		if _, err := g.Write([]byte(chunk)); err != nil {
			t.Fatalf("chunk %q: %v", chunk, err)
		}
	}
	if _, err := g.Write([]byte("e")); err == nil {
		t.Error("line 2 at 5 bytes passed a limit of 4")
	}
}
