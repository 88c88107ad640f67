package taskfile

import (
	"errors"
	"testing"
	"time"
)

func TestMatchWithin(t *testing.T) {
	timeout := errors.New("match timeout after 1s on input `x`")
	cases := []struct {
		name  string
		errs  []error       // what fn returns on each call
		sleep time.Duration // how long each call takes
		want  error
		calls int
	}{
		{"ok", []error{nil}, 0, nil, 1},
		{"spurious then ok", []error{timeout, timeout, nil}, 0, nil, 3},
		{"spurious every time", []error{timeout, timeout, timeout, timeout, timeout}, 0, timeout, spuriousTries},
		{"real timeout", []error{timeout, nil}, 60 * time.Millisecond, timeout, 1},
		{"other error", []error{errors.New("bad"), nil}, 0, errors.New("bad"), 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			err := MatchWithin(100*time.Millisecond, func() error {
				calls++
				time.Sleep(tc.sleep)
				return tc.errs[calls-1]
			})
			if (err == nil) != (tc.want == nil) || (err != nil && err.Error() != tc.want.Error()) || calls != tc.calls {
				t.Errorf("err %v after %d calls, want %v after %d", err, calls, tc.want, tc.calls)
			}
		})
	}
}
