package omnicloze

import (
	"strconv"
	"strings"

	"github.com/benchline/benchline/datasets"
	scorer "github.com/benchline/benchline/scorers/omnicloze"
)

// genParams are the parameters of a build with a writer, with their
// defaults. They are part of the version id; a build without a writer
// takes none.
var genParams = map[string]string{
	"writer":      "",  // the writer model, <provider>/<model>; empty: hand-written items only
	"blanks":      "5", // blanks asked for per item
	"distractors": "3", // distractors asked for per blank
	"seed":        "0", // the seed of the writer's requests (and of the baseline cloze maker); another seed asks again
}

// runtimeParams do not change the content, so are kept out of the version
// id (in Plan.Runtime), with their defaults.
var runtimeParams = map[string]string{
	"unit_items": strconv.Itoa(defaultUnitItems), // captions per generation unit (one activity)
}

// Options are the parsed build parameters.
type Options struct {
	// Writer is the writer model; "" for hand-written items only.
	Writer      string
	Blanks      int
	Distractors int
	Seed        uint64
	// UnitItems is the captions per generation unit.
	UnitItems int
}

// Generate reports whether the build asks a writer for items.
func (o Options) Generate() bool { return o.Writer != "" }

// ParseParams validates a build's parameters and returns the options and
// the normalized parameters the version id is derived from: none for a
// build from hand-written items (which takes no parameter but unit_items),
// every generation parameter with its default otherwise.
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
	o.Writer = norm["writer"]
	if !o.Generate() {
		for k := range params {
			if _, ok := genParams[k]; ok && k != "writer" {
				return o, nil, bad(k, params[k], "applies only to a build with writer=MODEL")
			}
		}
		return o, nil, nil
	}
	if strings.Contains(o.Writer, ",") || !strings.Contains(o.Writer, "/") {
		return o, nil, bad("writer", o.Writer, "want one <provider>/<model>")
	}
	if o.Blanks, err = strconv.Atoi(norm["blanks"]); err != nil || o.Blanks < 1 || o.Blanks > 20 {
		return o, nil, bad("blanks", norm["blanks"], "want an integer in 1..20")
	}
	if o.Distractors, err = strconv.Atoi(norm["distractors"]); err != nil || o.Distractors < 1 || o.Distractors >= scorer.MaxOptions {
		return o, nil, bad("distractors", norm["distractors"], "want an integer in 1..%d", scorer.MaxOptions-1)
	}
	if o.Seed, err = strconv.ParseUint(norm["seed"], 10, 64); err != nil {
		return o, nil, bad("seed", norm["seed"], "want a non-negative integer")
	}
	norm["blanks"] = strconv.Itoa(o.Blanks)
	norm["distractors"] = strconv.Itoa(o.Distractors)
	norm["seed"] = strconv.FormatUint(o.Seed, 10)
	return o, norm, nil
}
