package omnicloze_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/datasetstest"
	"github.com/benchline/benchline/datasets/omnicloze"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/schemas"
	scorer "github.com/benchline/benchline/scorers/omnicloze"
)

// TestBuildHandWritten builds the hand-written items from the embedded
// copy, a directory and an http URL (which cannot be listed, so is probed
// for items.jsonl): the same rows and the same version every time; the
// media are referenced, never copied.
func TestBuildHandWritten(t *testing.T) {
	_, want := fixtures(t)
	var version string
	for _, src := range []string{omnicloze.Embedded, datasetstest.CopyFixtures(t, nil), datasetstest.ServeDir(t, "fixtures") + "/"} {
		t.Run(src, func(t *testing.T) {
			plan, rows, err := datasetstest.Build[schemas.OmniClozeItem](t, omnicloze.Builder{}, datasets.Request{Source: src}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != len(want) {
				t.Fatalf("%d rows, want %d", len(rows), len(want))
			}
			for i, r := range rows {
				w := want[i]
				w.SourceFile = r.SourceFile
				if r != w || r.Origin != omnicloze.HandWritten || !strings.HasSuffix(r.SourceFile, omnicloze.ItemsFile) {
					t.Fatalf("row %d: %+v, want %+v", i, r, w)
				}
				if _, err := scorer.DecodeBlanks(&r); err != nil {
					t.Fatal(err)
				}
			}
			if len(plan.Sources) != 1 || plan.Sources[0].Name != omnicloze.ItemsFile || plan.Stats[omnicloze.StatHandWritten] != int64(len(want)) {
				t.Errorf("plan: sources %+v, stats %v; want items.jsonl only", plan.Sources, plan.Stats)
			}
			if version == "" {
				version = plan.Version
			} else if plan.Version != version {
				t.Errorf("version %s, want %s: the same files give the same version", plan.Version, version)
			}
		})
	}
}

func TestBuildBadInput(t *testing.T) {
	line := func(id, extra string) string {
		return `{"id": "` + id + `", "domain": "music", "subcategory": "live_performance", "media": {"kind": "audio", "uri": "https://m.invalid/a.wav", ` +
			`"sha256": "` + strings.Repeat("0", 64) + `", "type": "audio/wav"}, "caption": "A loud violin plays."` + extra + `}`
	}
	item := func(id, passage, blanks string) string {
		return line(id, `, "passage": "`+passage+`", "blanks": `+blanks)
	}
	tests := []struct {
		name   string
		file   string
		line   string
		params map[string]string
		want   string
	}{
		{"an unknown field", omnicloze.ItemsFile, strings.Replace(line("x-1", ""), `"caption"`, `"captoin"`, 1), nil, `items.jsonl:7: not a caption line: json: unknown field "captoin"`},
		{"a duplicate id", omnicloze.ItemsFile, item("hw-mu-01", "A [BLANK_1] violin.", `[{"blank": 1, "options": ["loud", "soft"], "answer": "loud"}]`), nil, `duplicate id "hw-mu-01"`},
		{"an id used by a caption", omnicloze.ItemsFile, item("mu-01", "A [BLANK_1] violin.", `[{"blank": 1, "options": ["loud", "soft"], "answer": "loud"}]`),
			map[string]string{"writer": "a/b"}, `items.jsonl:7: duplicate id "mu-01" (first at`},
		{"a media kind", omnicloze.CaptionsFile, strings.Replace(line("x-1", ""), `"kind": "audio"`, `"kind": "sound"`, 1), map[string]string{"writer": "a/b"}, `captions.jsonl:28: caption x-1: media: kind "sound"`},
		{"a type that does not fit the kind", omnicloze.ItemsFile, strings.Replace(line("x-1", ""), `"audio/wav"`, `"image/png"`, 1), nil, "type image/png does not fit kind audio"},
		{"a short sha256", omnicloze.ItemsFile, strings.Replace(line("x-1", ""), strings.Repeat("0", 64), "abc", 1), nil, `sha256 "abc"`},
		{"a path for a URI", omnicloze.ItemsFile, strings.Replace(line("x-1", ""), "https://m.invalid/a.wav", "media/a.wav", 1), nil, "not a URI with a scheme"},
		{"a passage in the captions file", omnicloze.CaptionsFile, line("x-1", `, "passage": "p"`), map[string]string{"writer": "a/b"}, `has no "passage" nor "blanks"`},
		{"an item without a passage", omnicloze.ItemsFile, line("x-1", ""), nil, `items.jsonl:7: item x-1: missing or empty "passage"`},
		{"a hand-written item the checker rejects", omnicloze.ItemsFile, item("x-1", "A [BLANK_1] violin.", `[{"blank": 1, "options": ["quiet", "soft"], "answer": "quiet"}]`),
			nil, `items.jsonl:7: item x-1: answer_not_in_caption: blank 1: the answer "quiet" does not occur`},
		{"a hand-written item the passage gives away", omnicloze.ItemsFile, item("x-1", "A [BLANK_1] violin, loud.", `[{"blank": 1, "options": ["loud", "soft"], "answer": "loud"}]`),
			nil, `answerable_without_caption: blank 1: "loud" occurs in the passage`},
		{"a malformed hand-written item", omnicloze.ItemsFile, item("x-1", "A [BLANK_2] violin.", `[{"blank": 1, "options": ["loud", "soft"], "answer": "loud"}]`),
			nil, "malformed: omnicloze: invalid blanks: the passage's marker 1 is [BLANK_2]"},
		{"an unknown parameter", "", "", map[string]string{"writers": "a/b"}, `unknown parameter "writers"`},
		{"blanks without a writer", "", "", map[string]string{"blanks": "3"}, "applies only to a build with writer=MODEL"},
		{"two writers", "", "", map[string]string{"writer": "a/b,c/d"}, "want one <provider>/<model>"},
		{"no distractor", "", "", map[string]string{"writer": "a/b", "distractors": "0"}, "want an integer in 1..9"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := datasetstest.CopyFixtures(t, func(dir string) {
				if tc.file != "" {
					datasetstest.AppendLine(t, filepath.Join(dir, tc.file), tc.line)
				}
			})
			_, err := omnicloze.Builder{}.Plan(context.Background(), datasets.Env{Store: blobtest.NewMemory()}, datasets.Request{Source: dir, Params: tc.params})
			var ie *datasets.InputError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want an InputError containing %q", err, tc.want)
			}
		})
	}
	t.Run("no item files", func(t *testing.T) {
		dir := datasetstest.CopyFixtures(t, func(dir string) { os.Remove(filepath.Join(dir, omnicloze.ItemsFile)) })
		_, err := omnicloze.Builder{}.Plan(context.Background(), datasets.Env{Store: blobtest.NewMemory()}, datasets.Request{Source: dir})
		if err == nil || !strings.Contains(err.Error(), "give --param writer=MODEL") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("a writer without captions", func(t *testing.T) {
		dir := datasetstest.CopyFixtures(t, func(dir string) { os.Remove(filepath.Join(dir, omnicloze.CaptionsFile)) })
		_, err := omnicloze.Builder{}.Plan(context.Background(), datasets.Env{Store: blobtest.NewMemory()},
			datasets.Request{Source: dir, Params: map[string]string{"writer": "a/b"}})
		want := filepath.Join(dir, omnicloze.CaptionsFile) + ": a build with a writer needs the reference captions, and this source has none"
		var ie *datasets.InputError
		if !errors.As(err, &ie) || err.Error() != want {
			t.Errorf("err = %v, want %s", err, want)
		}
	})
}
