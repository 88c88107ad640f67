package medrubric

import (
	"sort"
	"strconv"
	"strings"

	"github.com/benchline/benchline/datasets"
)

// genParams are the parameters of a build with writers, with their
// defaults. They are part of the version id; a build without writers
// takes none.
var genParams = map[string]string{
	"writers":   "",     // writer models, MODEL,MODEL,... (sorted, distinct); empty: hand-written rubrics
	"k":         "2",    // a merged rubric is kept when at least k writers proposed it
	"seed":      "0",    // the seed of the writers' requests; another seed asks again
	"threshold": "0.6",  // the similarity at which two proposals are the same rubric (DefaultThreshold)
	"evidence":  "true", // give writers the source's evidence passages (EvidenceFile), if it has any
}

// runtimeParams do not change the content, so are kept out of the version
// id (in Plan.Runtime), with their defaults.
var runtimeParams = map[string]string{
	"unit_items": strconv.Itoa(defaultUnitItems), // items per generation unit (one activity)
}

// Options are the parsed build parameters.
type Options struct {
	// Writers are the writer models, sorted; none for hand-written rubrics.
	Writers   []string
	K         int
	Seed      uint64
	Threshold float64
	Evidence  bool
	// UnitItems is the items per generation unit.
	UnitItems int
}

// Generate reports whether the build asks writer models for rubrics.
func (o Options) Generate() bool { return len(o.Writers) > 0 }

// ParseParams validates a build's parameters and returns the options and
// the normalized parameters the version id is derived from: none for a
// build from hand-written rubrics (which takes no parameter but
// unit_items), every generation parameter with its default otherwise.
func ParseParams(params map[string]string) (Options, map[string]string, error) {
	var o Options
	bad := datasets.ParamError
	norm, rt, err := datasets.SplitParams(params, genParams, runtimeParams)
	if err != nil {
		return o, nil, err
	}
	if o.UnitItems, err = strconv.Atoi(rt["unit_items"]); err != nil || o.UnitItems < 1 {
		return o, nil, bad("unit_items", rt["unit_items"], "want a positive integer")
	}
	for _, w := range strings.Split(norm["writers"], ",") {
		if w = strings.TrimSpace(w); w != "" {
			o.Writers = append(o.Writers, w)
		}
	}
	sort.Strings(o.Writers)
	if !o.Generate() {
		for k := range params {
			if _, ok := genParams[k]; ok && k != "writers" {
				return o, nil, bad(k, params[k], "applies only to a build with writers=MODEL,MODEL,...")
			}
		}
		return o, nil, nil
	}
	for i, w := range o.Writers {
		if i > 0 && o.Writers[i-1] == w {
			return o, nil, bad("writers", norm["writers"], "%s is named twice (writers are told apart by name)", w)
		}
		if !strings.Contains(w, "/") {
			return o, nil, bad("writers", norm["writers"], "%q: want <provider>/<model>", w)
		}
	}
	norm["writers"] = strings.Join(o.Writers, ",")
	if o.K, err = strconv.Atoi(norm["k"]); err != nil || o.K < 1 || o.K > len(o.Writers) {
		return o, nil, bad("k", norm["k"], "want an integer in 1..%d (the number of writers)", len(o.Writers))
	}
	if o.Seed, err = strconv.ParseUint(norm["seed"], 10, 64); err != nil {
		return o, nil, bad("seed", norm["seed"], "want a non-negative integer")
	}
	if o.Threshold, err = strconv.ParseFloat(norm["threshold"], 64); err != nil || !(o.Threshold > 0 && o.Threshold <= 1) {
		return o, nil, bad("threshold", norm["threshold"], "want a number in (0, 1]")
	}
	if o.Evidence, err = strconv.ParseBool(norm["evidence"]); err != nil {
		return o, nil, bad("evidence", norm["evidence"], "want true or false")
	}
	norm["k"] = strconv.Itoa(o.K)
	norm["seed"] = strconv.FormatUint(o.Seed, 10)
	norm["threshold"] = strconv.FormatFloat(o.Threshold, 'f', -1, 64)
	norm["evidence"] = strconv.FormatBool(o.Evidence)
	return o, norm, nil
}
