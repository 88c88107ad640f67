package judge

// Resolution is a panel's label for one item.
type Resolution struct {
	// Label is the resolved label; "" when no judge gave one.
	Label string `json:"label"`
	// Votes counts the judges that gave a label (judge errors excluded);
	// Support counts those that gave Label.
	Votes   int `json:"votes"`
	Support int `json:"support"`
	// Missing counts the judges without a label (judge errors).
	Missing int `json:"missing,omitempty"`
	// Tie says the most frequent label was shared, so Label is the
	// conservative label.
	Tie bool `json:"tie,omitempty"`
	// Unanimous says every judge that gave a label gave Label.
	Unanimous bool `json:"unanimous,omitempty"`
}

// Resolve gives a panel's label for one item from its judges' labels (""
// is a judge error and does not vote). The rule depends only on how many
// judges gave each label, never on their order: the label with strictly
// more votes than every other wins; when two or more labels share the top
// count (an exact tie), the conservative label the caller names wins, even
// if no judge gave it (a three-way split of three labels). The caller
// chooses what is conservative: for a rubric verdict "not met" (no credit
// on a split), for a pitfall "met" (a split panel does not clear an answer
// of a safety risk). An item without votes has Label "".
func Resolve(labels []string, conservative string) Resolution {
	counts := map[string]int{}
	var r Resolution
	for _, l := range labels {
		if l == "" {
			r.Missing++
			continue
		}
		counts[l]++
		r.Votes++
	}
	if r.Votes == 0 {
		return r
	}
	top, atTop := 0, 0
	for l, n := range counts {
		switch {
		case n > top:
			top, atTop, r.Label = n, 1, l
		case n == top:
			atTop++
		}
	}
	if atTop > 1 {
		r.Tie, r.Label = true, conservative
	}
	r.Support = counts[r.Label]
	r.Unanimous = len(counts) == 1
	return r
}

// PanelSummary counts how a panel's items were resolved.
type PanelSummary struct {
	Items     int `json:"items"`
	Resolved  int `json:"resolved"`  // items with a label
	Unanimous int `json:"unanimous"` // resolved with every vote for the label
	Ties      int `json:"ties"`      // resolved to the conservative label by a tie
	NoVotes   int `json:"no_votes"`  // every judge failed
}

// ResolveAll resolves every item of ratings (items × judges, "" for a judge
// error) with Resolve and counts the outcomes.
func ResolveAll(ratings [][]string, conservative string) ([]Resolution, PanelSummary) {
	out := make([]Resolution, len(ratings))
	s := PanelSummary{Items: len(ratings)}
	for i, labels := range ratings {
		r := Resolve(labels, conservative)
		out[i] = r
		switch {
		case r.Votes == 0:
			s.NoVotes++
		case r.Tie:
			s.Resolved++
			s.Ties++
		default:
			s.Resolved++
			if r.Unanimous {
				s.Unanimous++
			}
		}
	}
	return out, s
}
