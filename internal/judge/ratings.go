package judge

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// RatingsKey is the key, at the top level of a result's details (a JSON
// object), under which a task stores the []Ratings of its sample, so that
// the run's agreement can be computed over every sample (RatingsOf,
// RunAgreement) by code that knows no benchmark.
const RatingsKey = "panel_ratings"

// Ratings are the labels a panel of judges gave the items of one sample
// (for a rubric benchmark: every rubric of every turn), for one judged
// figure.
type Ratings struct {
	// Set names the judged figure the labels decide (e.g. "score", or
	// "score_asym" for a checker panel).
	Set string `json:"set"`
	// Judges is the panel, as Panel returns it.
	Judges []string `json:"judges"`
	// Items holds one row per item, one label per judge in Judges' order;
	// "" is a judge error (no label).
	Items [][]string `json:"items"`
}

// Agreement is how far a panel agreed over a whole run, for one set.
type Agreement struct {
	Set    string   `json:"set"`
	Judges []string `json:"judges"`
	// Samples and Items count what the ratings covered; Unanimous counts
	// the items on which every judge that gave a label gave the same one
	// (items with fewer than two labels are not counted).
	Samples   int `json:"samples"`
	Items     int `json:"items"`
	Paired    int `json:"paired"` // items with at least two labels
	Unanimous int `json:"unanimous"`
	// Alpha is Krippendorff's alpha (nominal) over the items; nil when it
	// is undefined, with Note saying why (one judge, no variance).
	Alpha *float64 `json:"alpha,omitempty"`
	Note  string   `json:"note,omitempty"`
}

// RatingsOf returns the ratings stored in a result's details JSON under
// RatingsKey; none when the details have no such key (or are empty).
func RatingsOf(details string) ([]Ratings, error) {
	if strings.TrimSpace(details) == "" {
		return nil, nil
	}
	var d struct {
		Ratings []Ratings `json:"panel_ratings"`
	}
	if err := json.Unmarshal([]byte(details), &d); err != nil {
		return nil, fmt.Errorf("judge: read panel ratings: %w", err)
	}
	return d.Ratings, nil
}

// RunAgreement pools the ratings of every sample of a run by set and
// panel, and computes each pool's agreement. Pools are sorted by set, then
// by panel.
func RunAgreement(ratings []Ratings) []Agreement {
	type pool struct {
		a     Agreement
		units [][]string
	}
	pools := map[string]*pool{}
	for _, r := range ratings {
		key := r.Set + "\x00" + strings.Join(r.Judges, ",")
		p := pools[key]
		if p == nil {
			p = &pool{a: Agreement{Set: r.Set, Judges: r.Judges}}
			pools[key] = p
		}
		p.a.Samples++
		for _, it := range r.Items {
			p.a.Items++
			p.units = append(p.units, it)
			first, labels, same := "", 0, true
			for _, l := range it {
				switch {
				case l == "":
					continue
				case labels == 0:
					first = l
				case l != first:
					same = false
				}
				labels++
			}
			if labels >= 2 {
				p.a.Paired++
				if same {
					p.a.Unanimous++
				}
			}
		}
	}
	keys := make([]string, 0, len(pools))
	for k := range pools {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]Agreement, 0, len(keys))
	for _, k := range keys {
		p := pools[k]
		alpha, err := AlphaNominal(p.units)
		switch {
		case err == nil:
			p.a.Alpha = &alpha
		case errors.Is(err, ErrNoPairs):
			p.a.Note = "n/a (no item has two labels: one judge, or every other one failed)"
		case errors.Is(err, ErrNoVariance):
			p.a.Note = "n/a (no variance: every label is the same)"
		default:
			p.a.Note = "n/a (" + err.Error() + ")"
		}
		out = append(out, p.a)
	}
	return out
}
