package integration

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/aggregate"
	"github.com/benchline/benchline/internal/app"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/childproc"
	"github.com/benchline/benchline/internal/config"
	"github.com/benchline/benchline/internal/devstack"
	"github.com/benchline/benchline/internal/secret"
)

// lockedBuffer is a bytes.Buffer safe for a process's output and a test
// reading it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// cleanEnv is the test's environment without any variable that configures
// benchline, Temporal, AWS or OpenAI (BENCHLINE_CACHE, where the servers
// are, stays).
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k != "BENCHLINE_CACHE" && (strings.HasPrefix(k, "BENCHLINE_") || strings.HasPrefix(k, "TEMPORAL_") ||
			strings.HasPrefix(k, "AWS_") || strings.HasPrefix(k, "OPENAI_")) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// poll waits until cond holds, failing the test after timeout or when
// dead reports that the process it waits on ended.
func poll(t *testing.T, what string, timeout time.Duration, dead func() bool, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if dead != nil && dead() {
			t.Fatalf("the process ended while waiting for %s", what)
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// childPID finds the process named comm whose parent is ppid.
func childPID(t *testing.T, ppid int, comm string) int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		open, close := bytes.IndexByte(stat, '('), bytes.LastIndexByte(stat, ')')
		if open < 0 || close < 0 {
			continue
		}
		fields := strings.Fields(string(stat[close+1:]))
		if string(stat[open+1:close]) == comm && len(fields) > 1 && fields[1] == strconv.Itoa(ppid) {
			return pid
		}
	}
	t.Fatalf("no %s process under %d", comm, ppid)
	return 0
}

// TestDevEnvFile starts `benchline dev --env-file` as a process, on free
// ports and with a providers file, and drives it from other commands that
// only source the file (set -a; . FILE; set +a): a dataset build, an
// evaluation of a model of a provider only the providers file defines
// (so the dev stack's own worker must have loaded it), and a build of bad
// input whose error must read once. Then it SIGKILLs the stack's MinIO and
// checks that dev restarts it and the store answers again.
func TestDevEnvFile(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	basePort, err := devstack.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	providers := filepath.Join(dir, "providers.yaml")
	writeFiles(t, dir, map[string]string{"providers.yaml": fmt.Sprintf("providers:\n  mybase:\n    base_url: http://127.0.0.1:%d/v1\n", basePort)})
	envFile := filepath.Join(dir, "dev.env")

	var stdout, stderr lockedBuffer
	dev := exec.Command(bin, "dev", "--dir", filepath.Join(dir, "state"), "--temporal-port", "0", "--ui-port", "0",
		"--s3-port", "0", "--baseline-port", strconv.Itoa(basePort), "--env-file", envFile)
	dev.Env = append(cleanEnv(), "BENCHLINE_PROVIDERS="+providers, "BENCHLINE_TASK_QUEUE=devenv")
	dev.Stdout, dev.Stderr = &stdout, &stderr
	devp, err := childproc.Start(dev)
	if err != nil {
		t.Fatal(err)
	}
	dead := devp.Exited
	t.Cleanup(func() {
		_ = dev.Process.Signal(syscall.SIGINT)
		select {
		case <-devp.Done():
		case <-time.After(30 * time.Second):
			devp.Kill()
		}
		if t.Failed() {
			t.Logf("dev stdout:\n%s\ndev stderr:\n%s", stdout.String(), stderr.String())
		}
	})
	poll(t, "the env file", 3*time.Minute, dead, func() bool { _, err := os.Stat(envFile); return err == nil })
	if out := stdout.String(); !strings.Contains(out, "AWS_SECRET_ACCESS_KEY="+config.DevSecretKey) {
		t.Errorf("dev did not print the credentials it set up:\n%s", out)
	}

	// run runs a benchline command in an environment that has only the
	// env file's variables on top of a clean one.
	run := func(args ...string) (string, string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		sh := exec.CommandContext(ctx, "sh", append([]string{"-c", `set -a; . "$0"; set +a; exec "$@"`, envFile, bin}, args...)...)
		sh.Env = cleanEnv()
		var o, e bytes.Buffer
		sh.Stdout, sh.Stderr = &o, &e
		err := sh.Run()
		return o.String(), e.String(), err
	}

	if _, e, err := run("dataset", "build", "bfcl"); err != nil {
		t.Fatalf("dataset build: %v\n%s", err, e)
	}
	// baseline/ runs write the dataset's references; mybase/reference then
	// answers from them through the same baseline server.
	if _, e, err := run("eval", "--dataset", "bfcl", "--model", "baseline/reference"); err != nil {
		t.Fatalf("eval of baseline/reference: %v\n%s", err, e)
	}
	if _, e, err := run("eval", "--dataset", "bfcl", "--model", "mybase/reference"); err != nil {
		t.Fatalf("eval of mybase/reference (a provider only the providers file defines): %v\n%s", err, e)
	}
	// Read the summary from the stack's store, configured from the env file.
	vars := readEnvFile(t, envFile)
	cfg, err := config.Load("", func(k string) (string, bool) { v, ok := vars[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	cfg.S3.AccessKeyID, cfg.S3.SecretAccessKey = vars["AWS_ACCESS_KEY_ID"], secret.New(vars["AWS_SECRET_ACCESS_KEY"])
	ctx := context.Background()
	store, err := app.OpenStore(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	infos, err := store.List(ctx, "runs/")
	if err != nil {
		t.Fatal(err)
	}
	var models []string
	for _, info := range infos {
		if !strings.HasSuffix(info.Key, "/summary.json") {
			continue
		}
		var s aggregate.Summary
		if err := blob.GetJSON(ctx, store, info.Key, &s); err != nil {
			t.Fatal(err)
		}
		if s.Samples == 0 || len(s.Metrics) == 0 || s.Metrics[0].Mean != 1 {
			t.Errorf("summary %s: model %s, %d samples, metrics %+v; want every sample right", info.Key, s.Model, s.Samples, s.Metrics)
		}
		models = append(models, s.Model)
	}
	slices.Sort(models)
	if !slices.Equal(models, []string{"baseline/reference", "mybase/reference"}) {
		t.Errorf("run summaries of %v in the dev stack's store, want baseline/reference and mybase/reference", models)
	}

	// A build of bad input fails with its error said once.
	bad := filepath.Join(dir, "bad")
	good, err := os.ReadFile("../../datasets/bfcl/fixtures/possible_answer/BFCL_v4_multiple.json")
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, bad, map[string]string{
		"BFCL_v4_multiple.json":                 `{"id": "multiple_0", "question": [[{"role": "user"` + "\n",
		"possible_answer/BFCL_v4_multiple.json": string(good),
	})
	_, e, err := run("dataset", "build", "bfcl", "--source", bad)
	loc := filepath.Join(bad, "BFCL_v4_multiple.json") + ":1:"
	if err == nil || strings.Count(e, loc) != 1 || strings.Contains(e, "retryable") {
		t.Errorf("bad build: err %v, stderr %q: want a failure naming %s once, without Temporal's annotations", err, e, loc)
	}

	// SIGKILL the stack's MinIO: dev restarts it and the store answers.
	minio := childPID(t, dev.Process.Pid, "minio")
	if err := syscall.Kill(minio, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	poll(t, "dev to restart minio", 2*time.Minute, dead, func() bool { return strings.Contains(stderr.String(), "minio is back") })
	if !strings.Contains(stderr.String(), "minio died (signal: killed); restarting it") {
		t.Errorf("dev did not say minio died:\n%s", stderr.String())
	}
	if o, e, err := run("dataset", "ls"); err != nil || !strings.Contains(o, "bfcl") {
		t.Errorf("dataset ls after the restart: %v\n%s%s", err, o, e)
	}
}

// readEnvFile parses KEY=value lines (the values dev writes need no
// unquoting here: the test's paths are plain).
func readEnvFile(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	vars := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("env file line %q is not KEY=value", line)
		}
		vars[k] = v
	}
	return vars
}
