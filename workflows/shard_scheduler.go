package workflows

import "time"

// shardScheduler decides how many consecutive shards each shard activity of
// an EvaluateModel run gets (the grouping of fast shards, ShardGroup). It is
// pure: no Temporal calls, so its decisions are table-tested
// (shard_scheduler_test.go) and, being a function of the run's state, the
// same on replay. Its progress lives in the run's EvalState (NextShard,
// ShardSeconds, ShardsTimed), which continue-as-new carries.
type shardScheduler struct {
	st *EvalState
	// target is the time one activity should last; ≤ 0: one shard each.
	target time.Duration
	// conc is how many activities run at once.
	conc int
	// hinted: size the first groups from hint (seconds per shard, from
	// the model's last run on the dataset) until shards have reported.
	hinted bool
	hint   float64
	// stopAt is the first shard this workflow run does not start.
	stopAt int
	// fillLeft is the shards left when the current wave of launches began.
	fillLeft int
}

// more reports whether shards are left to start in this workflow run.
func (s *shardScheduler) more() bool { return s.st.NextShard < s.stopAt }

// wave begins a wave of launches (the slots free after a result). Sized
// from a hint (nothing timed yet), every activity of the first wave shares
// out the shards left when the wave began, so it takes equal groups
// instead of groups that shrink launch by launch. Later launches share out
// the shards left at each, so the tail shrinks.
func (s *shardScheduler) wave() { s.fillLeft = s.stopAt - s.st.NextShard }

// next returns the first shard and the number of shards of the next
// activity and moves past them. Call it only when more() is true.
func (s *shardScheduler) next() (shard, n int) {
	shard, n = s.st.NextShard, 1
	if s.target > 0 {
		var perShard time.Duration
		switch {
		case s.st.ShardsTimed > 0:
			perShard = time.Duration(s.st.ShardSeconds / float64(s.st.ShardsTimed) * float64(time.Second))
		case s.hinted:
			perShard = time.Duration(s.hint * float64(time.Second))
		}
		left := s.stopAt - shard
		if s.hinted && s.st.ShardsTimed == 0 {
			left = s.fillLeft
		}
		n = min(ShardGroup(perShard, s.target, left, s.conc), s.stopAt-shard)
	}
	s.st.NextShard += n
	return shard, n
}

// done records a finished activity of shards shards that took seconds
// (0: it did not say, e.g. a result file found by a retry).
func (s *shardScheduler) done(shards int, seconds float64) {
	if seconds > 0 {
		s.st.ShardSeconds += seconds
		s.st.ShardsTimed += shards
	}
}
