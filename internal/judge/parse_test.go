package judge

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/extract")

func TestExtract(t *testing.T) {
	obj := `{"met": true, "reason": "ok"}`
	tests := []struct {
		name, reply, want, wantErr string
	}{
		{"bare object", obj, obj, ""},
		{"surrounding whitespace", "\n  " + obj + "\n", obj, ""},
		{"json fence", "```json\n" + obj + "\n```", obj, ""},
		{"plain fence", "```\n" + obj + "\n```", obj, ""},
		{"leading prose and trailing text", "Verdict follows. " + obj + " Thanks!", obj, ""},
		{"think block with an object inside", `<think>try {"met": false}</think>` + obj, obj, ""},
		{"thinking tag, upper case", `<THINKING>{"met": false}</THINKING> ` + obj, obj, ""},
		{"closing think only", `reasoning {"met": false} </think>` + obj, obj, ""},
		{"unclosed think", `<think>reasoning ` + obj, "", "no JSON object"},
		{"last object wins", `{"met": false} then ` + obj, obj, ""},
		{"fenced object beats a later bare one", "```json\n" + obj + "\n```\nlike {\"met\": false}", obj, ""},
		{"nested object is not a candidate", `{"a": {"met": false}}`, `{"a": {"met": false}}`, ""},
		{"braces inside strings", `{"reason": "uses {x} and }"}`, `{"reason": "uses {x} and }"}`, ""},
		{"latex braces skipped", `\frac{1}{2} ` + obj, obj, ""},
		{"prose braces skipped", `{met: yes} ` + obj, obj, ""},
		{"empty object", `{}`, `{}`, ""},
		{"object inside an unterminated array", `[{"met": true}`, `{"met": true}`, ""},
		{"array of scalars", `[1, 2]`, "", "no JSON object"},
		{"unterminated object", `{"met": true`, "", "no JSON object"},
		{"empty reply", "", "", "no JSON object"},
		{"too long", strings.Repeat("x", MaxReplyBytes+1), "", "longer than"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Extract(tc.reply)
			if tc.wantErr != "" {
				var perr *ParseError
				if !errors.As(err, &perr) || !errors.Is(err, ErrUnparseable) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Extract = %q, %v; want a *ParseError containing %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Extract = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// TestExtractGolden runs Extract on realistic judge replies in
// testdata/extract/*.txt; each .golden file holds the object or the error.
func TestExtractGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "extract", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden inputs: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".txt")
		t.Run(name, func(t *testing.T) {
			in, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Extract(string(in))
			if err != nil {
				got = "error: " + err.Error()
			}
			golden := strings.TrimSuffix(f, ".txt") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != strings.TrimSuffix(string(want), "\n") {
				t.Errorf("Extract(%s) =\n%s\nwant\n%s", f, got, want)
			}
		})
	}
}

func TestStripThinking(t *testing.T) {
	tests := []struct{ in, want string }{
		{"no reasoning", "no reasoning"},
		{"<think>a</think>b<think>c</think>d", "bd"},
		{"a</think>b</think>c", "c"},
		{"a<think>b", "a"},
		{"<Think>\nx\n</Think>y", "y"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			if got := StripThinking(tc.in); got != tc.want {
				t.Errorf("StripThinking(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

type rubricVerdict struct {
	ID     string `json:"id"`
	Met    bool   `json:"met"`
	Reason string `json:"reason,omitempty"`
}

type rubricReply struct {
	Verdicts []rubricVerdict `json:"verdicts"`
	Note     *string         `json:"note,omitempty"`
}

// Validate requires at least one verdict and distinct ids.
func (r *rubricReply) Validate() error {
	if len(r.Verdicts) == 0 {
		return errors.New("no verdicts")
	}
	seen := map[string]bool{}
	for _, v := range r.Verdicts {
		if seen[v.ID] {
			return fmt.Errorf("rubric %s judged twice", v.ID)
		}
		seen[v.ID] = true
	}
	return nil
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name, reply string
		want        []rubricVerdict
		wantErr     string // "" for success
	}{
		{"valid", `{"verdicts":[{"id":"r1","met":true,"reason":"a"},{"id":"r2","met":false}]}`,
			[]rubricVerdict{{"r1", true, "a"}, {"r2", false, ""}}, ""},
		{"keys matched ignoring case", `{"Verdicts":[{"ID":"r1","Met":true}]}`, []rubricVerdict{{"r1", true, ""}}, ""},
		{"unknown field", `{"verdicts":[{"id":"r1","met":true,"score":3}]}`, nil, `unknown field "score"`},
		{"missing required nested field", `{"verdicts":[{"id":"r1","met":true},{"id":"r2"}]}`, nil, `missing required field "verdicts[1].met"`},
		{"null counts as missing", `{"verdicts":[{"id":"r1","met":null}]}`, nil, `missing required field "verdicts[0].met"`},
		{"missing top-level field", `{"note":"x"}`, nil, `missing required field "verdicts"`},
		{"wrong type", `{"verdicts":[{"id":"r1","met":"yes"}]}`, nil, "cannot unmarshal string"},
		{"duplicate key", `{"verdicts":[{"id":"r1","met":true,"met":false}]}`, nil, `duplicate key "verdicts[0].met"`},
		{"duplicate key differing in case", `{"verdicts":[{"id":"r1","met":true,"MET":false}]}`, nil, `duplicate key "verdicts[0].MET"`},
		{"validate error", `{"verdicts":[{"id":"r1","met":true},{"id":"r1","met":false}]}`, nil, "rubric r1 judged twice"},
		{"a later example that does not fit falls back to the answer",
			`{"verdicts":[{"id":"r1","met":false}]} Schema reminder: {"verdicts": [{"id": "...", "met": "bool"}]}`,
			[]rubricVerdict{{"r1", false, ""}}, ""},
		{"no candidate fits: the preferred one's error", `{"verdicts":[]} {"verdicts":[{"id":"r1"}]}`, nil, `missing required field "verdicts[0].met"`},
		{"no object", `met: yes`, nil, "no JSON object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got rubricReply
			err := Decode(tc.reply, &got)
			if tc.wantErr != "" {
				if !errors.Is(err, ErrUnparseable) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Decode = %+v, %v; want an unparseable error containing %q", got, err, tc.wantErr)
				}
				if len(got.Verdicts) != 0 {
					t.Errorf("a failed Decode left %+v in its target", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if fmt.Sprint(got.Verdicts) != fmt.Sprint(tc.want) {
				t.Errorf("Decode = %+v, want %+v", got.Verdicts, tc.want)
			}
		})
	}
}

func TestDecodeEmbeddedAndMaps(t *testing.T) {
	type Base struct {
		Judge string `json:"judge"`
	}
	type withEmbedded struct {
		Base
		Scores map[string]rubricVerdict `json:"scores"`
		Skip   string                   `json:"-"`
	}
	var v withEmbedded
	if err := Decode(`{"judge":"j","scores":{"a":{"id":"r1","met":true}}}`, &v); err != nil || v.Judge != "j" || !v.Scores["a"].Met {
		t.Fatalf("Decode = %+v, %v", v, err)
	}
	err := Decode(`{"scores":{}}`, &v)
	if !strings.Contains(fmt.Sprint(err), `missing required field "judge"`) {
		t.Errorf("missing embedded field: %v", err)
	}
	err = Decode(`{"judge":"j","scores":{"b":{"met":true}}}`, &v)
	if !strings.Contains(fmt.Sprint(err), `missing required field "scores.b.id"`) {
		t.Errorf("missing field in a map value: %v", err)
	}
}

func TestDecodeNeedsPointer(t *testing.T) {
	var v rubricReply
	for _, target := range []any{v, (*rubricReply)(nil), nil} {
		err := Decode(`{"verdicts":[]}`, target)
		if err == nil || errors.Is(err, ErrUnparseable) {
			t.Errorf("Decode(%T) = %v, want a plain programming error", target, err)
		}
	}
}

func TestParseErrorExcerpt(t *testing.T) {
	long := strings.Repeat("é", ExcerptLen+10)
	_, err := Extract(long)
	var perr *ParseError
	if !errors.As(err, &perr) {
		t.Fatalf("Extract = %v", err)
	}
	if want := strings.Repeat("é", ExcerptLen) + "…"; perr.Excerpt != want {
		t.Errorf("Excerpt = %q, want %d runes and an ellipsis", perr.Excerpt, ExcerptLen)
	}
	if !strings.HasPrefix(err.Error(), "judge: unparseable reply: no JSON object in the reply (reply \"éé") {
		t.Errorf("Error() = %q", err.Error())
	}
}
