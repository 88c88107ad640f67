package baseline

import (
	"strings"
	"testing"
	"time"
)

// TestOptionStringErrors: both option strings (faults and batch options)
// name the item or key that is wrong, and the batch options list their keys.
func TestOptionStringErrors(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{func() error { _, err := ParseFaults("latency"); return err }(), `baseline: faults "latency": want key=value`},
		{func() error { _, err := ParseFaults("nope=1"); return err }(), `baseline: faults: unknown key "nope"`},
		{func() error { _, err := ParseFaults("drop=x"); return err }(), `baseline: faults "drop=x": strconv.ParseFloat`},
		{func() error { _, err := ParseBatchOptions(" never=0.1, x=1"); return err }(), `baseline: batch options: unknown key "x" (delay, expire, never, fail_lines)`},
		{func() error { _, err := ParseBatchOptions("delay=soon"); return err }(), `baseline: batch options "delay=soon": time: invalid duration`},
	} {
		if tc.err == nil || !strings.HasPrefix(tc.err.Error(), tc.want) {
			t.Errorf("error %v, want it to start with %s", tc.err, tc.want)
		}
	}
	if o, err := ParseBatchOptions(" never=0.1,, delay=2s"); err != nil || o.Never != 0.1 || o.Delay != 2*time.Second {
		t.Errorf("ParseBatchOptions = %+v, %v", o, err)
	}
}
