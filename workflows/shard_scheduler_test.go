package workflows

import (
	"slices"
	"testing"
	"time"
)

// TestShardScheduler plays waves of launches and results against the
// scheduler and checks the group sizes it hands out.
func TestShardScheduler(t *testing.T) {
	type result struct {
		shards  int
		seconds float64
	}
	for _, tc := range []struct {
		name   string
		sched  shardScheduler
		state  EvalState
		waves  [][]result // each wave: the results that arrive before it (the first wave: none)
		launch int        // activities launched per wave
		want   [][]int    // group sizes launched per wave
	}{
		{
			name:  "grouping off: one shard each",
			sched: shardScheduler{target: -1, conc: 2, stopAt: 5},
			waves: [][]result{nil, {{1, 1}}, {{1, 1}}, {{1, 1}}}, launch: 2,
			want: [][]int{{1, 1}, {1, 1}, {1}, nil},
		},
		{
			name:  "untimed: one shard each until shards report, then groups to the target",
			sched: shardScheduler{target: 5 * time.Second, conc: 2, stopAt: 40},
			waves: [][]result{nil, {{1, 1}}, {{1, 1}}}, launch: 1,
			want: [][]int{{1}, {5}, {5}},
		},
		{
			name:  "hinted first wave shares the shards left when it began",
			sched: shardScheduler{target: 10 * time.Second, conc: 4, hinted: true, hint: 0.5, stopAt: 24},
			waves: [][]result{nil}, launch: 4,
			want: [][]int{{6, 6, 6, 6}},
		},
		{
			name:  "unhinted first wave shrinks launch by launch",
			sched: shardScheduler{target: 10 * time.Second, conc: 4, stopAt: 24},
			state: EvalState{ShardSeconds: 0.5, ShardsTimed: 1},
			waves: [][]result{nil}, launch: 4,
			want: [][]int{{6, 4, 3, 2}},
		},
		{
			name:  "the last group stops at stopAt",
			sched: shardScheduler{target: time.Minute, conc: 1, stopAt: 10},
			state: EvalState{NextShard: 7, ShardSeconds: 1, ShardsTimed: 1},
			waves: [][]result{nil}, launch: 1,
			want: [][]int{{3}},
		},
		{
			name:  "a result without a time leaves the measure as it was",
			sched: shardScheduler{target: 4 * time.Second, conc: 1, stopAt: 100},
			state: EvalState{ShardSeconds: 2, ShardsTimed: 1},
			waves: [][]result{nil, {{2, 0}}}, launch: 1,
			want: [][]int{{2}, {2}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := tc.state
			s := tc.sched
			s.st = &st
			var got [][]int
			for _, results := range tc.waves {
				for _, r := range results {
					s.done(r.shards, r.seconds)
				}
				s.wave()
				var sizes []int
				for range tc.launch {
					if !s.more() {
						break
					}
					first, n := s.next()
					if first+n != st.NextShard {
						t.Fatalf("next() = (%d, %d) but NextShard is %d", first, n, st.NextShard)
					}
					sizes = append(sizes, n)
				}
				got = append(got, sizes)
			}
			if !slices.EqualFunc(got, tc.want, slices.Equal) {
				t.Fatalf("groups %v, want %v", got, tc.want)
			}
		})
	}
}
