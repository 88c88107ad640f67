package sandbox

import (
	"context"
	"os/exec"
	"testing"
)

// BenchmarkOverhead measures the fixed cost of one sandboxed run of
// /bin/true with and without per-run cgroups, against a plain subprocess.
//
//	go test -run '^$' -bench Overhead ./internal/sandbox/
func BenchmarkOverhead(b *testing.B) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		cfg  Config
	}{{"cgroup", Config{}}, {"rlimit", Config{DisableCgroups: true}}} {
		s := newTestSandbox(b, tc.cfg)
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if r, err := s.Run(ctx, Cmd{Args: []string{"/bin/true"}}); err != nil || r.Status != StatusOK {
					b.Fatal(r, err)
				}
			}
		})
	}
	b.Run("plain", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command("/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
