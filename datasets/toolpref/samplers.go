package toolpref

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/benchline/benchline/internal/modelapi"
)

// A Sampler asks one model for Count candidate replies per item at one
// temperature, at build time.
type Sampler struct {
	Model       string // "<provider>/<model>", e.g. "baseline/noisy-0.3"
	Temperature float64
	Count       int
}

// Limits of a sampler entry.
const (
	maxTemperature = 2
	maxCount       = 64
)

// String renders s in the syntax ParseSamplers reads.
func (s Sampler) String() string {
	return fmt.Sprintf("%s@%sx%d", s.Model, formatTemp(s.Temperature), s.Count)
}

func formatTemp(t float64) string { return strconv.FormatFloat(t, 'g', -1, 64) }

// samplerSyntax is quoted in every parse error.
const samplerSyntax = "MODEL@TEMPERATURE[xCOUNT], e.g. baseline/noisy-0.3@0.7x2"

// ParseSamplers parses the "candidates" build parameter: comma-separated
// entries MODEL@TEMPERATURE[xCOUNT], where MODEL is "<provider>/<model>"
// (the model part may hold slashes; the last "@" ends it), TEMPERATURE is
// a number in [0, 2] and COUNT (default 1) an integer in [1, 64]:
//
//	baseline/noisy-0.3@0.7x2,baseline/reference@0x1
//
// An entry naming the same model and temperature as another is an error
// (give one entry with the summed count). The result is sorted by model,
// then temperature, so the order of the entries does not change the
// build; String of each entry, joined by commas, is the canonical form.
// "" gives no samplers.
func ParseSamplers(s string) ([]Sampler, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []Sampler
	seen := map[string]bool{}
	for _, raw := range strings.Split(s, ",") {
		e := strings.TrimSpace(raw)
		if e == "" {
			return nil, fmt.Errorf("empty entry in %q: want %s, comma-separated", s, samplerSyntax)
		}
		at := strings.LastIndex(e, "@")
		if at < 0 {
			return nil, fmt.Errorf("%q: no @TEMPERATURE: want %s", e, samplerSyntax)
		}
		sp := Sampler{Model: strings.TrimSpace(e[:at]), Count: 1}
		if _, _, err := modelapi.ParseModel(sp.Model); err != nil || strings.ContainsAny(sp.Model, " \t") {
			return nil, fmt.Errorf("%q: model %q is not <provider>/<model>: want %s", e, sp.Model, samplerSyntax)
		}
		if sp.Model == SyntheticSource {
			return nil, fmt.Errorf("%q: model name %q is reserved for the perturbation generator", e, sp.Model)
		}
		temp, count, hasCount := strings.Cut(strings.TrimSpace(e[at+1:]), "x")
		t, err := strconv.ParseFloat(strings.TrimSpace(temp), 64)
		if err != nil || math.IsNaN(t) || t < 0 || t > maxTemperature {
			return nil, fmt.Errorf("%q: temperature %q: want a number in [0, %d] (%s)", e, temp, maxTemperature, samplerSyntax)
		}
		sp.Temperature = t
		if hasCount {
			n, err := strconv.Atoi(strings.TrimSpace(count))
			if err != nil || n < 1 || n > maxCount {
				return nil, fmt.Errorf("%q: count %q: want an integer in [1, %d] (%s)", e, count, maxCount, samplerSyntax)
			}
			sp.Count = n
		}
		id := sp.Model + "@" + formatTemp(sp.Temperature)
		if seen[id] {
			return nil, fmt.Errorf("%q: %s is listed twice: give one entry with the summed count", e, id)
		}
		seen[id] = true
		out = append(out, sp)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Model != out[j].Model {
			return out[i].Model < out[j].Model
		}
		return out[i].Temperature < out[j].Temperature
	})
	return out, nil
}

// FormatSamplers is the canonical form of samplers (see ParseSamplers).
func FormatSamplers(ss []Sampler) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = s.String()
	}
	return strings.Join(parts, ",")
}
