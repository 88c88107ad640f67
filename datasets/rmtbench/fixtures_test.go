package rmtbench_test

import (
	"encoding/json"
	"testing"

	"github.com/benchline/benchline/datasets/rmtbench"
	"github.com/benchline/benchline/schemas"
	scorer "github.com/benchline/benchline/scorers/rmtbench"
)

func decodeRow(t *testing.T, r schemas.RMTBenchDialogue) (schemas.RMTCharacter, schemas.RMTDialogue) {
	t.Helper()
	var c schemas.RMTCharacter
	var d schemas.RMTDialogue
	if err := json.Unmarshal([]byte(r.CharacterJSON), &c); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(r.DialogueJSON), &d); err != nil {
		t.Fatal(err)
	}
	return c, d
}

// TestFixtures checks what the bundled fixtures promise: at least 8
// characters with two dialogues each in each language, custom and
// abstract characters, fixed and simulated dialogues, and every scenario
// in both languages.
func TestFixtures(t *testing.T) {
	rows, err := rmtbench.FixtureDialogues()
	if err != nil {
		t.Fatal(err)
	}
	perChar := map[string]map[string]int{} // character -> language -> dialogues
	modes, kinds := map[string]int{}, map[string]bool{}
	scenarios := map[string]map[string]bool{} // scenario -> languages
	for _, r := range rows {
		if perChar[r.CharacterID] == nil {
			perChar[r.CharacterID] = map[string]int{}
		}
		perChar[r.CharacterID][r.Language]++
		modes[r.Mode+"/"+r.Language]++
		kinds[r.CharacterKind] = true
		if scenarios[r.Scenario] == nil {
			scenarios[r.Scenario] = map[string]bool{}
		}
		scenarios[r.Scenario][r.Language] = true
	}
	if len(rows) < 32 || len(perChar) < 8 {
		t.Errorf("%d dialogues of %d characters", len(rows), len(perChar))
	}
	for c, langs := range perChar {
		if langs["en"] < 2 || langs["zh"] < 2 {
			t.Errorf("character %s: %v dialogues by language", c, langs)
		}
	}
	for _, m := range []string{"fixed/en", "fixed/zh", "simulated/en", "simulated/zh"} {
		if modes[m] < 4 {
			t.Errorf("%d %s dialogues", modes[m], m)
		}
	}
	if !kinds["custom"] || !kinds["abstract"] {
		t.Errorf("character kinds %v", kinds)
	}
	if len(scenarios) != 5 {
		t.Errorf("scenarios %v", scenarios)
	}
	for s, langs := range scenarios {
		if !langs["en"] || !langs["zh"] {
			t.Errorf("scenario %s only in %v", s, langs)
		}
	}
	t.Logf("%d dialogues, %d characters, modes %v", len(rows), len(perChar), modes)
}

// TestReferencesFollowTheRule: every reference reply of a fixed dialogue
// gets the best score on every dimension the rule asks, given the
// preferences stated in the earlier turns, and every preference is stated
// before the last turn (so memory is asked). The baseline judges answer
// with this rule, so the in-character baselines score 1 on them.
func TestReferencesFollowTheRule(t *testing.T) {
	rows, err := rmtbench.FixtureDialogues()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.Mode != schemas.RMTModeFixed {
			continue
		}
		c, d := decodeRow(t, r)
		var users []string
		for i, turn := range d.Turns {
			stated := scorer.PreferencesStated(d.Preferences, users)
			dims := make([]scorer.Dimension, 0, len(d.Dimensions))
			for _, name := range d.Dimensions {
				if dim := scorer.Dimension(name); dim != scorer.PreferenceMemory || len(stated) > 0 {
					dims = append(dims, dim)
				}
			}
			var reply scorer.Reply
			doc := scorer.JudgeOracle(scorer.OracleInput{Character: c, Dialogue: d, Stated: stated, Reply: turn.Reference, Dimensions: dims})
			if err := json.Unmarshal([]byte(doc), &reply); err != nil {
				t.Fatal(err)
			}
			for _, s := range reply.Scores {
				if s.Score != scorer.MaxScore {
					t.Errorf("%s turn %d: %s scores %d (%s): %q", r.ID, i+1, s.Dimension, s.Score, s.Reason, turn.Reference)
				}
			}
			users = append(users, turn.User)
		}
		if got := scorer.PreferencesStated(d.Preferences, users[:len(users)-1]); len(got) != len(d.Preferences) {
			t.Errorf("%s: %d of %d preferences stated before the last turn", r.ID, len(got), len(d.Preferences))
		}
	}
}
