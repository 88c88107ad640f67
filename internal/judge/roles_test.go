package judge

import (
	"errors"
	"math"
	"reflect"
	"testing"
)

func TestPanel(t *testing.T) {
	tests := []struct {
		name   string
		judges map[string]string
		role   string
		want   []string
	}{
		{"one judge", map[string]string{"judge": "openai/gpt-4o"}, "judge", []string{"openai/gpt-4o"}},
		{"a panel, sorted", map[string]string{"judge": "baseline/judge-yes,baseline/judge"}, "judge",
			[]string{"baseline/judge", "baseline/judge-yes"}},
		{"spaces, empties and repeats", map[string]string{"judge": " b/x , ,a/y,b/x,"}, "judge", []string{"a/y", "b/x"}},
		{"another role", map[string]string{"judge": "a/j", "checker": "c/k"}, "checker", []string{"c/k"}},
		{"a missing role", map[string]string{"judge": "a/j"}, "proposer", nil},
		{"no judges", nil, "judge", nil},
		{"only commas", map[string]string{"judge": ",,"}, "judge", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Panel(tc.judges, tc.role); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Panel = %q, want %q", got, tc.want)
			}
		})
	}
	// The order the user lists a panel in changes nothing.
	a := Panel(map[string]string{"judge": "x/1,y/2,z/3"}, "judge")
	b := Panel(map[string]string{"judge": "z/3,x/1,y/2"}, "judge")
	if !reflect.DeepEqual(a, b) {
		t.Errorf("order-dependent: %q vs %q", a, b)
	}
}

func TestRolesOf(t *testing.T) {
	const def = "baseline/judge"
	tests := []struct {
		name   string
		judges map[string]string
		want   Roles
		err    bool
	}{
		{"none: the default judge", nil, Roles{Judges: []string{def}}, false},
		{"a panel", map[string]string{"judge": "b/y,a/x"}, Roles{Judges: []string{"a/x", "b/y"}}, false},
		{"asymmetric", map[string]string{"proposer": "p/1", "checker": "c/2,c/1"},
			Roles{Judges: []string{def}, Proposer: "p/1", Checkers: []string{"c/1", "c/2"}}, false},
		{"a proposer alone", map[string]string{"proposer": "p/1"}, Roles{}, true},
		{"a checker alone", map[string]string{"checker": "c/1"}, Roles{}, true},
		{"two proposers", map[string]string{"proposer": "p/1,p/2", "checker": "c/1"}, Roles{}, true},
		{"an unknown role", map[string]string{"jugde": "a/x"}, Roles{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := RolesOf(tc.judges, def)
			if tc.err {
				if !errors.Is(err, ErrRoles) {
					t.Errorf("err = %v, want ErrRoles", err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("RolesOf = %+v, %v; want %+v", got, err, tc.want)
			}
			if got.Asymmetric() != (tc.want.Proposer != "") {
				t.Errorf("Asymmetric = %v", got.Asymmetric())
			}
		})
	}
}

func TestRatingsOf(t *testing.T) {
	tests := []struct {
		name    string
		details string
		want    int
		err     bool
	}{
		{"empty", "", 0, false},
		{"no ratings", `{"turns":[]}`, 0, false},
		{"two sets", `{"panel_ratings":[{"set":"score","judges":["a","b"],"items":[["met","met"]]},{"set":"score_asym","judges":["c"],"items":[["not_met"]]}]}`, 2, false},
		{"not JSON", `{"panel_ratings":`, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := RatingsOf(tc.details)
			if (err != nil) != tc.err || len(got) != tc.want {
				t.Errorf("RatingsOf = %+v, %v", got, err)
			}
		})
	}
}

func TestRunAgreement(t *testing.T) {
	const m, n = "met", "not_met"
	ab := []string{"a", "b"}
	// Two samples of the same panel pool into one set of units: (m,m),
	// (n,n), (m,n) and (n,""). By hand: the unit with one label is left
	// out; coincidences o_mm = 2, o_nn = 2, o_mn = o_nm = 1, n_m = n_n = 3,
	// n = 6; alpha = 1 − 5 · 2 / (2 · 3 · 3) = 1 − 10/18 = 4/9.
	ratings := []Ratings{
		{Set: "score", Judges: ab, Items: [][]string{{m, m}, {n, n}}},
		{Set: "score", Judges: ab, Items: [][]string{{m, n}, {n, ""}}},
		// Another set: a single checker, so alpha is undefined.
		{Set: "score_asym", Judges: []string{"c"}, Items: [][]string{{m}, {n}}},
		// A panel that always agrees on one label: no variance.
		{Set: "score_z", Judges: ab, Items: [][]string{{m, m}, {m, m}}},
	}
	got := RunAgreement(ratings)
	if len(got) != 3 {
		t.Fatalf("got %d pools, want 3: %+v", len(got), got)
	}
	s := got[0]
	if s.Set != "score" || s.Samples != 2 || s.Items != 4 || s.Paired != 3 || s.Unanimous != 2 || s.Alpha == nil {
		t.Fatalf("score pool = %+v", s)
	}
	if math.Abs(*s.Alpha-4.0/9) > 1e-12 {
		t.Errorf("alpha = %v, want 4/9", *s.Alpha)
	}
	if a := got[1]; a.Set != "score_asym" || a.Alpha != nil || a.Note == "" || a.Paired != 0 {
		t.Errorf("single judge = %+v, want no alpha and a note", a)
	}
	if z := got[2]; z.Alpha != nil || z.Unanimous != 2 || z.Note != "n/a (no variance: every label is the same)" {
		t.Errorf("no variance = %+v", z)
	}
}

// TestRunAgreementInterval: scores written as labels pool apart from the
// same set's nominal labels and get interval alpha.
func TestRunAgreementInterval(t *testing.T) {
	ab := []string{"a", "b"}
	// Units (1,2) and (3,3). By hand: o_12 = o_21 = 1, o_33 = 2; n_1 = n_2
	// = 1, n_3 = 2, n = 4. Interval: observed Σ o·δ² = 2, expected
	// Σ n_c·n_k·δ² = 2·(1·1·1 + 1·2·4 + 1·2·1) = 22, alpha = 1 − 3·2/22 =
	// 8/11. Nominal, the same labels: expected 2·(1 + 2 + 2) = 10, alpha =
	// 1 − 3·2/10 = 2/5.
	items := [][]string{{"1", "2"}, {"3", "3"}}
	got := RunAgreement([]Ratings{
		{Set: "q", Judges: ab, Items: items, Scale: ScaleInterval},
		{Set: "q", Judges: ab, Items: items},
		{Set: "r", Judges: ab, Items: [][]string{{"1", "x"}}, Scale: ScaleInterval},
	})
	if len(got) != 3 {
		t.Fatalf("got %d pools, want 3: %+v", len(got), got)
	}
	byScale := map[string]Agreement{}
	for _, a := range got[:2] {
		byScale[a.Scale] = a
	}
	in, nom := byScale[ScaleInterval], byScale[ScaleNominal]
	if in.Alpha == nil || math.Abs(*in.Alpha-8.0/11) > 1e-12 {
		t.Errorf("interval pool %+v, want alpha 8/11", in)
	}
	if nom.Alpha == nil || math.Abs(*nom.Alpha-0.4) > 1e-12 {
		t.Errorf("nominal pool %+v, want alpha 2/5", nom)
	}
	if r := got[2]; r.Alpha != nil || r.Note != `n/a (a label is not a number: "x")` {
		t.Errorf("a label that is not a number: %+v", r)
	}
}

func TestNormalPanel(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"b/y, a/x,b/y", "a/x,b/y"},
		{"a/x,b/y", "a/x,b/y"},
		{" , ", ""},
		{"", ""},
	} {
		if got := NormalPanel(tc.in); got != tc.want {
			t.Errorf("NormalPanel(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
