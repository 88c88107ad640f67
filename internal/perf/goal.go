package perf

import (
	"math"
	"strconv"
)

// Goal is what a figure should reach. The zero Goal means docs/PERFORMANCE.md
// states none: the figure is reported, not judged.
type Goal struct {
	// AtLeast true: higher is better (value ≥ Value); false: lower is better (value ≤ Value).
	AtLeast bool
	Value   float64
}

// Set reports whether the goal is stated.
func (g Goal) Set() bool { return g.Value != 0 }

// String is "≥ 0.5", "≤ 512" or "–".
func (g Goal) String() string {
	if !g.Set() {
		return "–"
	}
	op := "≤"
	if g.AtLeast {
		op = "≥"
	}
	return op + " " + strconv.FormatFloat(g.Value, 'f', -1, 64)
}

// Judge returns how far the measured value is toward the goal: 1 is exactly
// on it, above 1 better than it (measured/goal for ≥ goals, goal/measured for
// ≤ goals), and whether it is met. ok is false when no goal is set or the ratio
// is undefined (a ≤ goal against a measured 0 or less).
func (g Goal) Judge(measured float64) (ratio float64, met, ok bool) {
	if !g.Set() || math.IsNaN(measured) || math.IsInf(measured, 0) {
		return 0, false, false
	}
	if g.AtLeast {
		ratio = measured / g.Value
	} else {
		if measured <= 0 {
			return 0, false, false
		}
		ratio = g.Value / measured
	}
	return ratio, ratio >= 1, true
}

// FormatValue prints a figure with three significant digits at most, and
// thousands separated: 0.473, 12.4, 2,274,738.
func FormatValue(v float64) string {
	a := math.Abs(v)
	switch {
	case v == 0:
		return "0"
	case a >= 1000:
		return groupThousands(strconv.FormatFloat(math.Round(v), 'f', 0, 64))
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	default:
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
}

func groupThousands(s string) string {
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}
