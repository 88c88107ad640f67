package judge

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
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
	// Scale says how labels compare: "" (ScaleNominal) for categories,
	// ScaleInterval for numbers written as labels (e.g. "0"–"4" scores),
	// whose agreement is then AlphaInterval's.
	Scale string `json:"scale,omitempty"`
}

// The scales of Ratings.
const (
	ScaleNominal  = ""
	ScaleInterval = "interval"
)

// Agreement is how far a panel agreed over a whole run, for one set.
type Agreement struct {
	Set    string   `json:"set"`
	Judges []string `json:"judges"`
	// Scale is the ratings' scale; alpha is nominal or interval by it.
	Scale string `json:"scale,omitempty"`
	// Samples and Items count what the ratings covered; Unanimous counts
	// the items on which every judge that gave a label gave the same one
	// (items with fewer than two labels are not counted).
	Samples   int `json:"samples"`
	Items     int `json:"items"`
	Paired    int `json:"paired"` // items with at least two labels
	Unanimous int `json:"unanimous"`
	// Alpha is Krippendorff's alpha over the items, nominal or interval by
	// Scale; nil when it is undefined, with Note saying why (one judge, no
	// variance, a label that is not a number on the interval scale).
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

// RunAgreement pools the ratings of every sample of a run by set, panel
// and scale, and computes each pool's agreement: AlphaNominal, or
// AlphaInterval over the labels read as numbers for ScaleInterval. Pools
// are sorted by set, then by panel.
func RunAgreement(ratings []Ratings) []Agreement {
	type pool struct {
		a     Agreement
		units [][]string
	}
	pools := map[string]*pool{}
	for _, r := range ratings {
		key := r.Set + "\x00" + strings.Join(r.Judges, ",") + "\x00" + r.Scale
		p := pools[key]
		if p == nil {
			p = &pool{a: Agreement{Set: r.Set, Judges: r.Judges, Scale: r.Scale}}
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
		var alpha float64
		var err error
		if p.a.Scale == ScaleInterval {
			alpha, err = alphaOfNumbers(p.units)
		} else {
			alpha, err = AlphaNominal(p.units)
		}
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

// errNotNumber is alphaOfNumbers' error for a label that is not a number.
var errNotNumber = errors.New("a label is not a number")

// alphaOfNumbers is AlphaInterval over labels read as numbers ("" is a
// missing rating).
func alphaOfNumbers(units [][]string) (float64, error) {
	nums := make([][]float64, len(units))
	for i, u := range units {
		nums[i] = make([]float64, len(u))
		for j, l := range u {
			if l == "" {
				nums[i][j] = math.NaN()
				continue
			}
			v, err := strconv.ParseFloat(l, 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return math.NaN(), fmt.Errorf("%w: %q", errNotNumber, l)
			}
			nums[i][j] = v
		}
	}
	return AlphaInterval(nums)
}
