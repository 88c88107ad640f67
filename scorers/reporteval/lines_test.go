package reporteval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/benchline/benchline/internal/golden"
)

var update = flag.Bool("update", false, "update golden files")

// linesGolden is the output of ScoreSectionsLines on linesInput.
const linesGolden = "testdata/lines.golden.jsonl"

// linesInput is every hand-written case of sectionsCases as an input line
// (id: the case name), with malformed and blank lines among them.
func linesInput(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	for i, tc := range sectionsCases {
		line, err := json.Marshal(map[string]string{"id": tc.name, "report": tc.report})
		if err != nil {
			t.Fatal(err)
		}
		b.Write(append(line, '\n'))
		switch i {
		case 2:
			b.WriteString("{\"id\": 7, \"report\": 7}\n\n")
		case 5:
			b.WriteString("   \n{\"id\": {\"k\": [1]}, \"report\": \"\"}\nnot json\n")
		}
	}
	b.WriteString(`{"id": "no report"}`) // no final newline
	return b.Bytes()
}

// TestScoreSectionsLinesGolden checks the command's output byte for byte:
// field order, [] for no sections, ids echoed verbatim, no HTML escaping
// ("markup is text"),
// the error field of malformed lines. Refresh with -update.
func TestScoreSectionsLinesGolden(t *testing.T) {
	var out bytes.Buffer
	err := ScoreSectionsLines(context.Background(), bytes.NewReader(linesInput(t)), &out)
	if !errors.Is(err, ErrMalformedInput) {
		t.Fatalf("err = %v, want ErrMalformedInput", err)
	}
	// Lines 4, 11 and 30 are malformed; 5 and 9 are blank.
	const wantMsg = `reporteval: score sections: malformed input: 3 line(s) [4 11 30] (first: line 4: field "report" is number, not a string)`
	if err.Error() != wantMsg {
		t.Errorf("err = %q, want %q", err, wantMsg)
	}
	golden.Check(t, linesGolden, out.String(), *update, "run with -update after checking")
	// Every well-formed line says what Sections says.
	dec := json.NewDecoder(&out)
	byName := map[string]sectionsCase{}
	for _, tc := range sectionsCases {
		byName[tc.name] = tc
	}
	n := 0
	for {
		var o SectionsOut
		if err := dec.Decode(&o); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		n++
		var name string
		if json.Unmarshal(o.ID, &name) != nil || o.Error != "" {
			continue
		}
		tc := byName[name]
		if o.Skipped != tc.skipped || len(o.Sections) != len(tc.want) {
			t.Errorf("%s: got skipped=%v and %d sections", name, o.Skipped, len(o.Sections))
		}
	}
	if want := len(sectionsCases) + 4; n != want { // 3 malformed, 1 object id
		t.Errorf("%d output lines, want %d", n, want)
	}
}

func TestScoreSectionsLines(t *testing.T) {
	long := strings.Repeat("x", 300<<10) // over bufio.Scanner's default 64 KiB
	for _, tc := range []struct {
		name, in, out string
		errIs         error
	}{
		{
			name: "skipped and not",
			in:   `{"id": 1, "report": "a\n\nb"}` + "\n" + `{"id": "x", "report": "a\n\nb\n\nc\n\nd"}` + "\n",
			out:  `{"id":1,"skipped":true,"sections":[]}` + "\n" + `{"id":"x","skipped":false,"sections":[]}` + "\n",
		},
		{
			name: "missing id is the builder's: md5 of the topic",
			in:   `{"topic": "t", "report": ""}`,
			out:  `{"id":"e358efa489f58062f10dd7316b65649e","skipped":true,"sections":[]}` + "\n",
		},
		{
			name: "missing id and topic is null, other fields ignored",
			in:   `{"title": "t", "report": ""}`,
			out:  `{"id":null,"skipped":true,"sections":[]}` + "\n",
		},
		{
			name: "a report of 300 KiB",
			in:   `{"id": 1, "report": "` + long + `"}`,
			out:  `{"id":1,"skipped":true,"sections":[]}` + "\n",
		},
		{
			name:  "report null",
			in:    `{"id": 2, "report": null}`,
			out:   `{"id":2,"skipped":false,"sections":[],"error":"line 1: missing string field \"report\""}` + "\n",
			errIs: ErrMalformedInput,
		},
		{
			name:  "not UTF-8",
			in:    "{\"id\": 3, \"report\": \"\xff\"}",
			out:   `{"id":null,"skipped":false,"sections":[],"error":"line 1: not valid UTF-8"}` + "\n",
			errIs: ErrMalformedInput,
		},
		{
			name:  "not an object",
			in:    `["a"]`,
			out:   `{"id":null,"skipped":false,"sections":[],"error":"line 1: not a JSON object but array"}` + "\n",
			errIs: ErrMalformedInput,
		},
		{
			name:  "bad JSON",
			in:    `{"id": 1, "report": "a`,
			out:   `{"id":null,"skipped":false,"sections":[],"error":"line 1: bad JSON: unexpected end of JSON input"}` + "\n",
			errIs: ErrMalformedInput,
		},
		{
			name: "empty input",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := ScoreSectionsLines(context.Background(), strings.NewReader(tc.in), &out)
			if tc.errIs == nil && err != nil || tc.errIs != nil && !errors.Is(err, tc.errIs) {
				t.Errorf("err = %v, want %v", err, tc.errIs)
			}
			if out.String() != tc.out {
				t.Errorf("output:\n got %s\nwant %s", out.String(), tc.out)
			}
		})
	}
}

// endless yields an endless report, for the line limit.
type endless struct{ started bool }

func (e *endless) Read(p []byte) (int, error) {
	n := 0
	if !e.started {
		e.started = true
		n = copy(p, `{"id": 1, "report": "`)
	}
	for i := n; i < len(p); i++ {
		p[i] = 'x'
	}
	return len(p), nil
}

func TestScoreSectionsLinesTooLong(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 64 MiB")
	}
	r := io.MultiReader(strings.NewReader("{\"id\": 0, \"report\": \"\"}\n"), &endless{})
	var out bytes.Buffer
	err := ScoreSectionsLines(context.Background(), r, &out)
	if err == nil || !strings.Contains(err.Error(), "line 2: longer than") {
		t.Errorf("err = %v, want line 2 named as too long", err)
	}
	if out.Len() != 0 {
		// The first line's result is buffered and not flushed: a fatal
		// error stops at once.
		t.Logf("output before the failure: %s", out.String())
	}
}

func TestScoreSectionsLinesCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := ScoreSectionsLines(ctx, strings.NewReader(`{"id": 1, "report": ""}`), io.Discard)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestScoreSectionsLinesWriteError(t *testing.T) {
	err := ScoreSectionsLines(context.Background(), strings.NewReader(`{"id": 1, "report": ""}`), failingWriter{})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("err = %v, want the write error", err)
	}
}
