package activities

import "testing"

func TestShardProgressValid(t *testing.T) {
	for _, tc := range []struct {
		p    shardProgress
		n    int
		want bool
	}{
		{shardProgress{}, 5, true},
		{shardProgress{Done: 2, Starts: []int{0}}, 5, true},
		{shardProgress{Done: 5, Starts: []int{0, 2, 3}}, 5, true},
		{shardProgress{Done: 2}, 5, false},                      // chunks done but no file
		{shardProgress{Starts: []int{0}}, 5, false},             // a file but nothing done
		{shardProgress{Done: 6, Starts: []int{0}}, 5, false},    // more chunks than the shard has
		{shardProgress{Done: 3, Starts: []int{1}}, 5, false},    // first file must start at chunk 0
		{shardProgress{Done: 3, Starts: []int{0, 0}}, 5, false}, // not increasing
		{shardProgress{Done: 3, Starts: []int{0, 3}}, 5, false}, // a file starting at Done is empty
		{shardProgress{Done: -1}, 5, false},
	} {
		if got := tc.p.valid(tc.n); got != tc.want {
			t.Errorf("%+v.valid(%d) = %v, want %v", tc.p, tc.n, got, tc.want)
		}
	}
}
