package stats

// Order says that system Better is significantly better than system Worse
// (indices into a list of n systems).
type Order struct{ Better, Worse int }

// Range is a rank range: the system's best and worst rank, 1 the top.
type Range struct{ Low, High int }

// RankRanges returns each of n systems' rank range given the significant
// pairwise orderings: a system's best rank is 1 + the number of systems
// significantly better than it, its worst n − the number significantly
// worse. A system ranks above another only where an ordering says so; two
// systems no test tells apart share ranks. A repeated ordering counts once.
func RankRanges(n int, orders []Order) []Range {
	seen := map[Order]bool{}
	better := make([]int, n) // systems better than i
	worse := make([]int, n)  // systems worse than i
	for _, o := range orders {
		if seen[o] || o.Better == o.Worse {
			continue
		}
		seen[o] = true
		better[o.Worse]++
		worse[o.Better]++
	}
	out := make([]Range, n)
	for i := range out {
		out[i] = Range{Low: 1 + better[i], High: n - worse[i]}
	}
	return out
}
