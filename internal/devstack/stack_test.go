package devstack_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchline/benchline/internal/config"
	"github.com/benchline/benchline/internal/devstack"
	"github.com/benchline/benchline/internal/secret"
)

// TestEnvFileSourcesBack writes a stack's env file, sources it in sh the
// way the docs say (set -a; . FILE; set +a), and checks that every value
// comes back as written, that the contract's variables are there, and that
// the configuration loaded from that environment is the stack's.
func TestEnvFileSourcesBack(t *testing.T) {
	dir := t.TempDir()
	providers := filepath.Join(dir, "it's a dir", "providers $HOME.yaml")
	if err := os.MkdirAll(filepath.Dir(providers), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(providers, []byte("providers: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := config.Default()
	base.Models.ProvidersFile = providers
	base.Temporal.TaskQueue = "q1"
	cfg := devstack.StackConfig(&base, 17233, 19000, "benchline")
	r := &devstack.Running{Stack: &devstack.Stack{Config: cfg}, BaselineURL: "http://127.0.0.1:18400/v1"}
	path := filepath.Join(dir, "dev.env")
	if err := r.WriteEnvFile(path); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("env file mode %v, %v; want 0600", st.Mode(), err)
	}
	sh := exec.Command("sh", "-c", `set -a; . "$1"; set +a; env -0`, "sh", path)
	sh.Env = []string{"PATH=" + os.Getenv("PATH"), "TEMPORAL_API_KEY=cloud-key", "BENCHLINE_CONFIG=/etc/prod.yaml"}
	out, err := sh.Output()
	if err != nil {
		t.Fatalf("sourcing: %v", err)
	}
	got := map[string]string{}
	for _, kv := range bytes.Split(out, []byte{0}) {
		if k, v, ok := strings.Cut(string(kv), "="); ok {
			got[k] = v
		}
	}
	for _, kv := range r.EnvVars() {
		if got[kv[0]] != kv[1] {
			t.Errorf("%s = %q after sourcing, want %q", kv[0], got[kv[0]], kv[1])
		}
	}
	for _, k := range []string{"TEMPORAL_ADDRESS", "BENCHLINE_S3_ENDPOINT", "BENCHLINE_S3_BUCKET", "BENCHLINE_S3_PATH_STYLE",
		"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION", "BENCHLINE_BASELINE_URL"} {
		if got[k] == "" {
			t.Errorf("the env file does not set %s", k)
		}
	}
	if got["TEMPORAL_API_KEY"] != "" || got["BENCHLINE_CONFIG"] != "" {
		t.Errorf("a Temporal Cloud key or a config file of the shell survived: %q, %q", got["TEMPORAL_API_KEY"], got["BENCHLINE_CONFIG"])
	}
	loaded, err := config.Load("", func(k string) (string, bool) { v, ok := got[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	// The AWS chain reads the credentials from the same environment.
	loaded.S3.AccessKeyID, loaded.S3.SecretAccessKey = got["AWS_ACCESS_KEY_ID"], secret.New(got["AWS_SECRET_ACCESS_KEY"])
	if loaded != cfg {
		t.Errorf("configuration from the env file\n  %+v\nwant the stack's\n  %+v", loaded, cfg)
	}
}
