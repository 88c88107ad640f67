package medrubric

import "sort"

// Session combines the metrics of a multi-turn session's turns, each
// scored as an answer: every metric is the mean over the turns where it is
// defined (a turn without a score does not count as 0), so a session has no
// score only when none of its turns has one; the counts are summed and
// Turns is the number of turns. Each turn weighs the same, however many
// rubrics it has.
func Session(turns []Metrics) Metrics {
	out := Metrics{Turns: len(turns)}
	sums := make([]float64, len(MetricNames))
	ns := make([]int, len(MetricNames))
	for _, t := range turns {
		for i, f := range t.fields() {
			if *f != nil {
				sums[i] += **f
				ns[i]++
			}
		}
		out.Rubrics += t.Rubrics
		out.JudgeErrors += t.JudgeErrors
		out.PitfallsMet += t.PitfallsMet
	}
	for i, f := range out.fields() {
		if ns[i] > 0 {
			*f = ptr(sums[i] / float64(ns[i]))
		}
	}
	return out
}

// Unit is one scored query (single-turn) or session (multi-turn, its
// Metrics from Session) of a domain.
type Unit struct {
	ID      string  `json:"id"`
	Domain  string  `json:"domain"`
	Metrics Metrics `json:"metrics"`
}

// Stat is the mean of one metric over the units where it is defined.
type Stat struct {
	Mean float64 `json:"mean"`
	N    int     `json:"n"`
}

// Summary rolls up the units of one scope.
type Summary struct {
	// Domain is the scope: a domain, or "" for all units.
	Domain string `json:"domain"`
	// Units counts the units; Scored those with a score; Unscored those
	// whose every verdict was a judge error.
	Units    int `json:"units"`
	Scored   int `json:"scored"`
	Unscored int `json:"unscored"`
	// Rubrics, JudgeErrors and PitfallsMet are sums over the units.
	Rubrics     int `json:"rubrics"`
	JudgeErrors int `json:"judge_errors"`
	PitfallsMet int `json:"pitfalls_met"`
	// Metrics holds, by name, the mean of each metric over the units
	// where it is defined (a metric defined nowhere is absent). Every unit
	// weighs the same: a session counts once, not once per turn.
	Metrics map[string]Stat `json:"metrics"`
}

// Rollup summarises units overall and per domain (sorted by domain name).
func Rollup(units []Unit) (overall Summary, domains []Summary) {
	overall = summarise("", units)
	byDomain := map[string][]Unit{}
	for _, u := range units {
		byDomain[u.Domain] = append(byDomain[u.Domain], u)
	}
	names := make([]string, 0, len(byDomain))
	for d := range byDomain {
		names = append(names, d)
	}
	sort.Strings(names)
	for _, d := range names {
		domains = append(domains, summarise(d, byDomain[d]))
	}
	return overall, domains
}

func summarise(domain string, units []Unit) Summary {
	s := Summary{Domain: domain, Units: len(units), Metrics: map[string]Stat{}}
	for _, u := range units {
		m := u.Metrics
		if m.Scored() {
			s.Scored++
		} else {
			s.Unscored++
		}
		s.Rubrics += m.Rubrics
		s.JudgeErrors += m.JudgeErrors
		s.PitfallsMet += m.PitfallsMet
		for name, v := range m.Map() {
			st := s.Metrics[name]
			st.Mean += v
			st.N++
			s.Metrics[name] = st
		}
	}
	for name, st := range s.Metrics {
		st.Mean /= float64(st.N)
		s.Metrics[name] = st
	}
	return s
}
