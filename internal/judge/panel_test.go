package judge

import (
	"reflect"
	"testing"
)

func TestResolve(t *testing.T) {
	const cons = "not_met"
	tests := []struct {
		name   string
		labels []string
		want   Resolution
	}{
		{"unanimous", []string{"met", "met", "met"}, Resolution{Label: "met", Votes: 3, Support: 3, Unanimous: true}},
		{"majority", []string{"met", "not_met", "met"}, Resolution{Label: "met", Votes: 3, Support: 2}},
		{"majority for the conservative label", []string{"not_met", "met", "not_met"}, Resolution{Label: "not_met", Votes: 3, Support: 2}},
		{"two-way tie", []string{"met", "not_met"}, Resolution{Label: cons, Votes: 2, Support: 1, Tie: true}},
		{"tie after a judge error", []string{"met", "", "not_met"}, Resolution{Label: cons, Votes: 2, Support: 1, Missing: 1, Tie: true}},
		{"errors do not vote", []string{"", "met", ""}, Resolution{Label: "met", Votes: 1, Support: 1, Missing: 2, Unanimous: true}},
		// A three-way split of labels none of which is conservative.
		{"tie without the conservative label", []string{"a", "b", "c"}, Resolution{Label: cons, Votes: 3, Support: 0, Tie: true}},
		{"plurality", []string{"a", "a", "b", "c"}, Resolution{Label: "a", Votes: 4, Support: 2}},
		{"no votes", []string{"", ""}, Resolution{Missing: 2}},
		{"no judges", nil, Resolution{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Resolve(tc.labels, cons); got != tc.want {
				t.Errorf("Resolve(%q) = %+v, want %+v", tc.labels, got, tc.want)
			}
		})
	}
}

// TestResolveIgnoresOrder resolves every permutation of a few panels and
// expects one answer per panel.
func TestResolveIgnoresOrder(t *testing.T) {
	panels := [][]string{
		{"met", "not_met", "met", "", "not_met"},
		{"a", "b", "c", "a", "b"},
		{"met", "met", "not_met", ""},
	}
	for _, p := range panels {
		want := Resolve(p, "not_met")
		permute(append([]string(nil), p...), 0, func(q []string) {
			if got := Resolve(q, "not_met"); got != want {
				t.Errorf("Resolve(%q) = %+v, but Resolve(%q) = %+v", q, got, p, want)
			}
		})
	}
}

func permute(s []string, k int, fn func([]string)) {
	if k == len(s) {
		fn(s)
		return
	}
	for i := k; i < len(s); i++ {
		s[k], s[i] = s[i], s[k]
		permute(s, k+1, fn)
		s[k], s[i] = s[i], s[k]
	}
}

func TestResolveAll(t *testing.T) {
	ratings := [][]string{
		{"met", "met", "met"},         // unanimous
		{"met", "not_met", "met"},     // majority
		{"met", "not_met", ""},        // tie
		{"", "", ""},                  // no votes
		{"not_met", "not_met", "met"}, // majority
	}
	res, sum := ResolveAll(ratings, "not_met")
	labels := make([]string, len(res))
	for i, r := range res {
		labels[i] = r.Label
	}
	if want := []string{"met", "met", "not_met", "", "not_met"}; !reflect.DeepEqual(labels, want) {
		t.Errorf("labels = %q, want %q", labels, want)
	}
	if want := (PanelSummary{Items: 5, Resolved: 4, Unanimous: 1, Ties: 1, NoVotes: 1}); sum != want {
		t.Errorf("summary = %+v, want %+v", sum, want)
	}
}
