package sandbox

import (
	"context"
	"os/exec"
	"testing"

	"golang.org/x/sys/unix"
)

// BenchmarkOverhead measures the fixed cost of one run of /bin/true: in the
// sandbox with per-run cgroups, with the rlimit fallback, under bare bwrap
// (the same namespaces, no gate, no cgroup, no limits) and as a plain
// subprocess. It reports wall time per run and cpu-ms/run: the CPU time of
// this process and its reaped children (the sandbox reaps bwrap's pid-1
// reaper, which reaped the program), so the figure holds on a busy machine.
//
//	go test -run '^$' -bench Overhead -benchtime 200x ./internal/sandbox/
func BenchmarkOverhead(b *testing.B) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		cfg  Config
	}{{"cgroup", Config{}}, {"rlimit", Config{DisableCgroups: true}}} {
		s := newTestSandbox(b, tc.cfg)
		b.Run(tc.name, func(b *testing.B) {
			measureCPU(b, func() {
				if r, err := s.Run(ctx, Cmd{Args: []string{"/bin/true"}}); err != nil || r.Status != StatusOK {
					b.Fatal(r, err)
				}
			})
		})
	}
	s := newTestSandbox(b, Config{}) // makes this process a child subreaper
	bare := append([]string{"--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session"},
		s.fsArgs...)
	bare = append(bare, "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--remount-ro", "/", "--", "/bin/true")
	b.Run("bwrap-only", func(b *testing.B) {
		measureCPU(b, func() {
			if err := exec.Command(s.bwrap, bare...).Run(); err != nil {
				b.Fatal(err)
			}
			// bwrap's reaper is orphaned to this process: reap it.
			for {
				if _, err := unix.Wait4(-1, nil, 0, nil); err != unix.EINTR {
					break
				}
			}
		})
	})
	b.Run("plain", func(b *testing.B) {
		measureCPU(b, func() {
			if err := exec.Command("/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
		})
	})
}

func measureCPU(b *testing.B, op func()) {
	cpu0 := ProcessCPU()
	for b.Loop() {
		op()
	}
	b.ReportMetric(float64((ProcessCPU()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/run")
}
