package omnicloze_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchline/benchline/datasets/omnicloze"
	"github.com/benchline/benchline/schemas"
	scorer "github.com/benchline/benchline/scorers/omnicloze"
)

// fixtures parses the bundled captions and hand-written items.
func fixtures(t testing.TB) ([]omnicloze.Caption, []schemas.OmniClozeItem) {
	t.Helper()
	var p omnicloze.Parser
	read := func(name string) *os.File {
		f, err := os.Open(filepath.Join("fixtures", name))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	captions, err := p.ParseCaptions(read(omnicloze.CaptionsFile), omnicloze.Embedded+"/"+omnicloze.CaptionsFile)
	if err != nil {
		t.Fatal(err)
	}
	items, err := p.ParseItems(read(omnicloze.ItemsFile), omnicloze.Embedded+"/"+omnicloze.ItemsFile)
	if err != nil {
		t.Fatal(err)
	}
	return captions, items
}

// othersIn is the captions of c's domain but c.
func othersIn(captions []omnicloze.Caption, c omnicloze.Caption) []omnicloze.Caption {
	var out []omnicloze.Caption
	for _, d := range captions {
		if d.Domain == c.Domain && d.ID != c.ID {
			out = append(out, d)
		}
	}
	return out
}

// TestFixtures checks what the bundled fixtures promise: at least 24
// captions over 3 domains and every media kind, placeholder media under
// the reserved .invalid domain whose sha256 follows the documented rule,
// hand-written items that pass the validation, and a cloze from the maker
// for every caption that passes it too.
func TestFixtures(t *testing.T) {
	captions, items := fixtures(t)
	domains, kinds := map[string]int{}, map[string]int{}
	for _, c := range captions {
		domains[c.Domain]++
		kinds[c.Media.Kind]++
		sum := sha256.Sum256([]byte("benchline omnicloze placeholder " + c.ID))
		if c.Media.SHA256 != hex.EncodeToString(sum[:]) || !strings.HasPrefix(c.Media.URI, "https://media.benchline.invalid/omnicloze/"+c.ID+".") {
			t.Errorf("%s: media %+v is not the documented placeholder", c.ID, c.Media)
		}
	}
	if len(captions) < 24 || len(domains) < 3 || kinds[schemas.MediaAudio] == 0 || kinds[schemas.MediaVisual] == 0 || kinds[schemas.MediaAudioVisual] == 0 {
		t.Fatalf("%d captions, domains %v, media kinds %v", len(captions), domains, kinds)
	}
	if len(items) < 6 {
		t.Errorf("%d hand-written items", len(items))
	}
	blanks := 0
	for _, c := range captions {
		r, ok := omnicloze.MakeCloze(c, othersIn(captions, c), 5, 3, 0)
		if !ok {
			t.Errorf("%s: the maker found no word to blank", c.ID)
			continue
		}
		it, check := omnicloze.ReplyItem(c, r, "baseline/judge")
		if !check.Kept() {
			t.Errorf("%s: the maker's item is rejected: %+v\n%s", c.ID, check, it.Passage)
		}
		if it.NumBlanks != 5 {
			t.Errorf("%s: %d blanks", c.ID, it.NumBlanks)
		}
		blanks += int(it.NumBlanks)
		if testing.Verbose() && c.ID == "mu-01" {
			t.Logf("%s\n%s", it.Passage, it.BlanksJSON)
		}
	}
	t.Logf("%d captions (%v; %v), %d blanks from the maker, %d hand-written items", len(captions), domains, kinds, blanks, len(items))
	_ = scorer.NotGiven
}
