package datasets

import (
	"errors"
	"io"
	"strings"
	"testing"
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
