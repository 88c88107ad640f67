//go:build deploytest

package realstack

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Container mode (BENCHLINE_WORKERS=containers, `make test-containers`):
// every benchline process of TestRealStack (the workers, the baseline
// server and each CLI command) runs as a podman container of the images
// deploy/containers/setup.sh built, on the host network, against the same
// PostgreSQL, Temporal server and MinIO processes. Killing a worker is
// `podman kill --signal KILL`.

// Images and the sandbox container's security options (docs/DEPLOY.md,
// "The sandbox worker"): the same set the chart and the compose file use.
var (
	runtimeImage = envOr("BENCHLINE_IMAGE", "localhost/benchline:dev")
	sandboxImage = envOr("BENCHLINE_SANDBOX_IMAGE", "localhost/benchline-sandbox:dev")
	// SandboxSecurityOpts is what deploy/containers/sandbox-suite.sh also
	// runs the sandbox's escape and resource suite with.
	sandboxSecurityOpts = strings.Fields(envOr("BENCHLINE_SANDBOX_OPTS", defaultSandboxOpts))
)

// defaultSandboxOpts mirrors deploy/containers/sandbox-opts.txt.
var defaultSandboxOpts = readSandboxOpts()

func readSandboxOpts() string {
	b, err := os.ReadFile("../containers/sandbox-opts.txt")
	if err != nil {
		return ""
	}
	var opts []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			opts = append(opts, l)
		}
	}
	return strings.Join(opts, " ")
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// containerMode says whether BENCHLINE_WORKERS asks for containers.
func containerMode(t *testing.T) bool {
	switch m := os.Getenv("BENCHLINE_WORKERS"); m {
	case "", "processes":
		return false
	case "containers":
		return true
	default:
		t.Fatalf("realstack: BENCHLINE_WORKERS=%q: want processes or containers", m)
		return false
	}
}

// An engine turns benchline commands into `podman run` command lines.
type engine struct {
	podman string
	prefix string   // container names' prefix, unique to this test
	mounts []string // host paths mounted read-only at the same path (config, board files)
	clis   atomic.Int64
}

func newEngine(t *testing.T, root string) *engine {
	t.Helper()
	p, err := exec.LookPath("podman")
	if err != nil {
		t.Fatal("realstack: container mode needs podman (deploy/containers/setup.sh installs it)")
	}
	for _, img := range []string{runtimeImage, sandboxImage} {
		if out, err := exec.Command(p, "image", "exists", img).CombinedOutput(); err != nil {
			t.Fatalf("realstack: image %s is missing (make test-containers builds it): %v %s", img, err, out)
		}
	}
	if len(sandboxSecurityOpts) == 0 {
		t.Fatal("realstack: no sandbox security options (deploy/containers/sandbox-opts.txt)")
	}
	e := &engine{podman: p, prefix: fmt.Sprintf("benchline-rs-%d-", os.Getpid()), mounts: []string{root}}
	t.Cleanup(func() {
		// Every container this test started, whatever state it is in.
		out, _ := exec.Command(p, "ps", "-aq", "--filter", "name=^"+e.prefix).Output()
		if ids := strings.Fields(string(out)); len(ids) > 0 {
			_ = exec.Command(p, append([]string{"rm", "-f", "-t", "0"}, ids...)...).Run()
		}
	})
	return e
}

// kind is what runs: "cli" and "baselines" (runtime image, as the chart's
// runtime containers: read-only, no capability), "main" (the same) or
// "sandbox" (the sandbox image with its security options).
func (e *engine) command(kind, name string, env []string, args []string) (string, []string) {
	image := runtimeImage
	argv := []string{"run", "--rm", "--network", "host", "--read-only", "--tmpfs", "/tmp"}
	if name == "" { // a CLI command: named too, so that cleanup finds it
		name = fmt.Sprintf("cli-%d", e.clis.Add(1))
	}
	argv = append(argv, "--name", e.prefix+name)
	switch kind {
	case "sandbox":
		image = sandboxImage
		// Work directories go to /dev/shm when it has 1 GiB free, as in the chart.
		argv = append(argv, "--shm-size", "2g")
		argv = append(argv, sandboxSecurityOpts...)
	default:
		argv = append(argv, "--cap-drop", "ALL", "--security-opt", "no-new-privileges")
	}
	for _, m := range e.mounts {
		argv = append(argv, "-v", m+":"+m+":ro")
	}
	// Only the variables the chart sets (and the secret's): not the host's.
	// BENCHLINE_CACHE is the host's set-up cache (`make` exports it): the
	// sandbox image has its own (/opt/benchline, its TypeScript).
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k != "BENCHLINE_CACHE" && (strings.HasPrefix(k, "BENCHLINE_") || strings.HasPrefix(k, "TEMPORAL_") ||
			strings.HasPrefix(k, "AWS_") || strings.HasPrefix(k, "OPENAI_")) {
			argv = append(argv, "-e", kv)
		}
	}
	argv = append(argv, image)
	return e.podman, append(argv, args...)
}

// kill SIGKILLs a named container (its podman run client then exits).
func (e *engine) kill(name string) func() {
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = exec.CommandContext(ctx, e.podman, "kill", "--signal", "KILL", e.prefix+name).Run()
	}
}

// imageVersion is the version the runtime image's binary reports.
func (e *engine) imageVersion(ctx context.Context, t *testing.T) string {
	t.Helper()
	bin, argv := e.command("cli", "", nil, []string{"version", "--json"})
	out, err := run(ctx, os.Environ(), bin, argv...)
	if err != nil {
		t.Fatalf("realstack: benchline version --json in %s: %v", runtimeImage, err)
	}
	return out
}

// A demoCell is one row of the scores table `benchline demo` prints.
type demoCell struct {
	metric, mean string
	n            int64
}

// runDemo runs `benchline demo` (its own embedded stack, in dir) and
// returns the board file it wrote and its scores table, by dataset and model.
func runDemo(ctx context.Context, t *testing.T, bin, dir string) (string, map[string]demoCell) {
	t.Helper()
	out, err := run(ctx, cleanEnv(), bin, "demo", "--dir", dir)
	if err != nil {
		t.Fatalf("realstack: benchline demo: %v", err)
	}
	_, table, ok := strings.Cut(out, "\n== scores of board ")
	if !ok {
		t.Fatalf("realstack: benchline demo printed no scores table:\n%s", lastLines(out, 30))
	}
	cells := map[string]demoCell{}
	lines := strings.Split(table, "\n")
	for _, l := range lines[2:] { // the title's end, the column names
		f := strings.Fields(l)
		if len(f) < 7 { // the blank line after the table
			break
		}
		// DATASET MODEL METRIC MEAN 95%-CI(one or more fields) N RANK RUN
		var n int64
		fmt.Sscan(f[len(f)-3], &n)
		cells[f[0]+" x "+f[1]] = demoCell{metric: f[2], mean: f[3], n: n}
	}
	if len(cells) == 0 {
		t.Fatalf("realstack: no rows in the demo's scores table:\n%s", table)
	}
	return dir + "/demo-board.yaml", cells
}

// checkBuildInfo checks that a worker container says which build it is, as
// `benchline version --json` in the image does: its first log line and the
// benchline_build_info gauge on its /metrics.
func checkBuildInfo(ctx context.Context, t *testing.T, e *engine, root, name string, port int) {
	t.Helper()
	var v struct{ Version, Commit string }
	if err := json.Unmarshal([]byte(e.imageVersion(ctx, t)), &v); err != nil || v.Version == "" {
		t.Fatalf("realstack: version --json in the image: %v", err)
	}
	var metrics string
	waitFor(ctx, t, "worker metrics", 2*time.Minute, func() error {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		metrics = string(b)
		return err
	})
	gauge := fmt.Sprintf(`commit=%q`, v.Commit)
	if !strings.Contains(metrics, "benchline_build_info{") || !strings.Contains(metrics, gauge) || !strings.Contains(metrics, fmt.Sprintf(`version=%q`, v.Version)) {
		t.Errorf("realstack: %s's /metrics lacks benchline_build_info with version %s and %s", name, v.Version, gauge)
	}
	b, _ := os.ReadFile(filepath.Join(root, "logs", name+".log"))
	first, _, _ := strings.Cut(string(b), "\n")
	var rec struct{ Msg, Version, Commit string }
	if err := json.Unmarshal([]byte(first), &rec); err != nil || rec.Msg != "benchline worker starting" || rec.Version != v.Version || rec.Commit != v.Commit {
		t.Errorf("realstack: %s's first log line %q: want the build (version %s, commit %s)", name, first, v.Version, v.Commit)
	}
	t.Logf("realstack: %s runs benchline %s (commit %s): first log line and benchline_build_info agree", name, v.Version, v.Commit)
}
