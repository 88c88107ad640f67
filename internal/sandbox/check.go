package sandbox

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Check runs one trivial program in the sandbox and reports an error,
// matching ErrInfrastructure, when bubblewrap cannot build its sandbox on
// this host: in a container that lacks the options it needs (user
// namespaces allowed by seccomp and AppArmor, an unmasked /proc and the
// capabilities docs/DEPLOY.md lists), so that a sandbox worker fails at
// start, naming the cause, instead of failing every sample later.
func (s *Sandbox) Check(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	r, err := s.Run(ctx, Cmd{Args: []string{"/bin/sh", "-c", "echo ok"}, Limits: Limits{WallTime: 20 * time.Second}})
	if err == nil && r.Status == StatusOK && strings.TrimSpace(r.Stdout) == "ok" {
		return nil
	}
	detail := strings.TrimSpace(lastLines(r.Stderr+"\n"+r.Detail, 5))
	if err != nil {
		detail = err.Error()
	}
	return infraErr("check", fmt.Errorf("bubblewrap cannot run a program here (status %s: %s); in a container it needs "+
		"the security options of docs/DEPLOY.md, \"The sandbox worker\": capabilities CHOWN, DAC_OVERRIDE, FOWNER, KILL, "+
		"SETUID and SETGID, a seccomp profile allowing sethostname and user namespaces, no AppArmor profile refusing them, "+
		"an unmasked /proc", r.Status, detail))
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
