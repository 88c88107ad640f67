//go:build deploytest

package realstack

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/benchline/benchline/internal/blob/s3blob"
	"github.com/benchline/benchline/internal/childproc"
	"github.com/benchline/benchline/internal/config"
	"github.com/benchline/benchline/internal/devstack"
	"github.com/benchline/benchline/internal/secret"
)

// temporalServerVersion is the go.temporal.io/server module setup.sh builds.
const temporalServerVersion = "v1.29.1"

// cacheBin is a tool built by deploy/dev/setup.sh or deploy/realstack/setup.sh.
func cacheBin(t *testing.T, name string) string {
	t.Helper()
	dir := os.Getenv("BENCHLINE_CACHE")
	if dir == "" {
		dir = filepath.Join(os.Getenv("HOME"), ".cache", "benchline")
	}
	p := filepath.Join(dir, "bin", name)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("realstack: %s: %v (run `make setup` and deploy/realstack/setup.sh, or `make test-deploy`)", name, err)
	}
	return p
}

// freePort is a free loopback port outside the kernel's ephemeral range
// (devstack.FreePort), where the local ports of this machine's many
// outgoing connections cannot take it before a server binds it.
func freePort(t *testing.T) int {
	t.Helper()
	p, err := devstack.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// freeLowPort is a free port below 32768 (outside the ephemeral range).
func freeLowPort(t *testing.T) int {
	t.Helper()
	for range 200 {
		p := 20000 + rand.IntN(12000)
		if ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p)); err == nil {
			ln.Close()
			return p
		}
	}
	t.Fatal("realstack: no free port below 32768")
	return 0
}

// A proc is a long-running process in its own process group, its output
// in logs/NAME.log, started through childproc: its Pdeathsig is armed on a
// thread that outlives the test's goroutines, and its group is never
// signalled once it was reaped (the id may be another process's by then).
type proc struct {
	name string
	p    *childproc.Proc
	// stop, when set, kills what the process started elsewhere first (a
	// container: its podman client's death alone would not end it).
	stop func()
}

func startProc(t *testing.T, root, name string, env []string, bin string, args ...string) *proc {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(root, "logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	logf, err := os.OpenFile(filepath.Join(root, "logs", name+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Dir = root
	cmd.Stdout, cmd.Stderr = logf, logf
	cp, err := childproc.Start(cmd)
	if err != nil {
		logf.Close()
		t.Fatalf("realstack: start %s: %v", name, err)
	}
	go func() { _ = cp.Wait(); logf.Close() }()
	p := &proc{name: name, p: cp}
	t.Cleanup(p.kill)
	return p
}

// kill SIGKILLs the process group and waits for the process.
func (p *proc) kill() {
	if p.stop != nil {
		p.stop()
	}
	p.p.Kill()
}

func (p *proc) exited() bool { return p.p.Exited() }

// run runs a short command and returns its standard output; a failure
// carries its standard error.
func run(ctx context.Context, env []string, bin string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%s %s: %w\n%s", filepath.Base(bin), strings.Join(args, " "), err, lastLines(errb.String(), 20))
	}
	return out.String(), nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// waitFor polls f until it succeeds or d passes.
func waitFor(ctx context.Context, t *testing.T, what string, d time.Duration, f func() error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var err error
	for {
		if err = f(); err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("realstack: %s: not ready within %v: %v", what, d, err)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// cleanEnv is the environment without any variable that would override
// the rendered configuration.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "BENCHLINE_") && k != "BENCHLINE_CACHE" || strings.HasPrefix(k, "TEMPORAL_") || strings.HasPrefix(k, "AWS_") || strings.HasPrefix(k, "OPENAI_") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// postgres is a private PostgreSQL cluster from Debian's packages.
type postgres struct {
	bin, data string
	port      int
}

// pgCommand runs a PostgreSQL tool as the postgres user when we are root
// (initdb and postgres refuse root).
func pgCommand(ctx context.Context, bin string, args ...string) *exec.Cmd {
	if os.Geteuid() == 0 {
		return exec.CommandContext(ctx, "runuser", append([]string{"-u", "postgres", "--", bin}, args...)...)
	}
	return exec.CommandContext(ctx, bin, args...)
}

func pgBinDir(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("initdb"); err == nil {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Dir(r)
		}
		return filepath.Dir(p)
	}
	m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(m) == 0 {
		t.Fatal("realstack: PostgreSQL's initdb not found (apt-get install -y postgresql; deploy/realstack/setup.sh does it as root)")
	}
	return filepath.Dir(m[len(m)-1])
}

func startPostgres(ctx context.Context, t *testing.T, root string) *postgres {
	t.Helper()
	pg := &postgres{bin: pgBinDir(t), data: filepath.Join(root, "pg"), port: freePort(t)}
	if err := os.MkdirAll(pg.data, 0o700); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("realstack: the postgres user (Debian's postgresql package creates it): %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(pg.data, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := pgCommand(ctx, filepath.Join(pg.bin, "initdb"), "-A", "trust", "-U", "postgres", "-D", pg.data).CombinedOutput(); err != nil {
		t.Fatalf("realstack: initdb: %v\n%s", err, out)
	}
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1", pg.port, pg.data)
	if out, err := pgCommand(ctx, filepath.Join(pg.bin, "pg_ctl"), "-D", pg.data, "-l", filepath.Join(pg.data, "server.log"), "-o", opts, "-w", "start").CombinedOutput(); err != nil {
		t.Fatalf("realstack: pg_ctl start: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		_ = pgCommand(context.Background(), filepath.Join(pg.bin, "pg_ctl"), "-D", pg.data, "-m", "immediate", "stop").Run()
	})
	return pg
}

// temporalServer is go.temporal.io/server's server on PostgreSQL, its
// frontend requiring mutual TLS.
type temporalServer struct {
	bin, root string
	port      int
	env       []string
	p         *proc
	starts    int
	pki       *pki
}

// setupTemporal creates the two databases and their schemas with the
// module's SQL tool and writes the module's development-postgres12 config
// with this run's ports and user, and mutual TLS on the frontend with the
// certificates of pki.
func setupTemporal(ctx context.Context, t *testing.T, root string, pg *postgres, pki *pki) *temporalServer {
	t.Helper()
	modcache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	mod := filepath.Join(strings.TrimSpace(string(modcache)), "go.temporal.io", "server@"+temporalServerVersion)
	sqlTool := cacheBin(t, "temporal-sql-tool")
	env := cleanEnv()
	for _, db := range []struct{ name, schema string }{{"temporal", "temporal"}, {"temporal_visibility", "visibility"}} {
		base := []string{"--plugin", "postgres12", "--ep", "127.0.0.1", "-p", strconv.Itoa(pg.port), "-u", "postgres", "--db", db.name}
		for _, step := range [][]string{{"create-database"}, {"setup-schema", "-v", "0.0"},
			{"update-schema", "-d", filepath.Join(mod, "schema", "postgresql", "v12", db.schema, "versioned")}} {
			if _, err := run(ctx, env, sqlTool, append(base, step...)...); err != nil {
				t.Fatalf("realstack: schema of %s: %v", db.name, err)
			}
		}
	}

	ts := &temporalServer{bin: cacheBin(t, "temporal-server"), root: filepath.Join(root, "temporal"), port: freePort(t), env: env, pki: pki}
	cfgDir := filepath.Join(ts.root, "config")
	if err := os.MkdirAll(filepath.Join(cfgDir, "dynamicconfig"), 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(mod, "config", "development-postgres12.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	conf := string(src)
	// Every fixed port of the development config gets a free one: other
	// stacks on this machine use 7233 and friends.
	ports := map[string]int{"7233": ts.port, "5432": pg.port}
	for _, p := range []string{"7234", "7235", "7239", "7243", "7936", "8000"} {
		ports[p] = freePort(t)
	}
	// Membership ports are stored in a smallint column: below 32768.
	for _, p := range []string{"6933", "6934", "6935", "6939"} {
		ports[p] = freeLowPort(t)
	}
	conf = regexp.MustCompile(`\b(7233|7234|7235|7239|7243|6933|6934|6935|6939|7936|8000|5432)\b`).ReplaceAllStringFunc(conf,
		func(s string) string { return strconv.Itoa(ports[s]) })
	conf = strings.ReplaceAll(conf, `user: "temporal"`, `user: "postgres"`)
	if !strings.Contains(conf, "\nglobal:\n") {
		t.Fatalf("realstack: the module's development-postgres12.yaml has no global section for tls")
	}
	conf = strings.Replace(conf, "\nglobal:\n", "\nglobal:\n"+pki.serverTLS(), 1)
	if err := os.WriteFile(filepath.Join(cfgDir, "development-postgres12.yaml"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	dyn, _ := filepath.Glob(filepath.Join(mod, "config", "dynamicconfig", "*"))
	for _, f := range dyn {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(cfgDir, "dynamicconfig", filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ts
}

func (ts *temporalServer) address() string { return fmt.Sprintf("127.0.0.1:%d", ts.port) }

// cli runs the temporal CLI against the server with benchline's client
// certificate.
func (ts *temporalServer) cli(ctx context.Context, t *testing.T, args ...string) (string, error) {
	t.Helper()
	args = append(append(args, "--address", ts.address()), ts.pki.cliTLS()...)
	return run(ctx, ts.env, cacheBin(t, "temporal"), args...)
}

// start starts the server and waits until the frontend says SERVING (over
// mutual TLS).
func (ts *temporalServer) start(ctx context.Context, t *testing.T) {
	t.Helper()
	ts.starts++
	ts.p = startProc(t, ts.root, "temporal-server", ts.env, ts.bin, "--root", ts.root, "--config", "config",
		"--env", "development-postgres12", "--allow-no-auth", "start")
	waitFor(ctx, t, "Temporal server", 3*time.Minute, func() error {
		if ts.p.exited() {
			t.Fatalf("realstack: the Temporal server exited (%s/logs/temporal-server.log)", ts.root)
		}
		hctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		out, err := ts.cli(hctx, t, "operator", "cluster", "health")
		if err == nil && !strings.Contains(out, "SERVING") {
			err = fmt.Errorf("health: %s", out)
		}
		return err
	})
}

// rendered is what the chart renders for this run: the ConfigMap's
// config.yaml (and its other files), each container's arguments and
// environment, and the main worker pod's volumes.
type rendered struct {
	config          string
	configMap       map[string]string
	main, sandbox   container
	baselines       container
	mainN, sandboxN int
	mainVolumes     []volume
	mainFSGroup     *int64 // the main pods' securityContext.fsGroup
	manifests       string
}

type container struct {
	Args         []string
	Env          []struct{ Name, Value string }
	VolumeMounts []struct {
		Name      string
		MountPath string `yaml:"mountPath"`
	} `yaml:"volumeMounts"`
}

// A volume is a pod's volume of a ConfigMap, or a projection of a
// ConfigMap and Secrets (the chart's config volume with tlsSecret set).
type volume struct {
	Name      string
	ConfigMap *struct{ Name string } `yaml:"configMap"`
	Projected *struct {
		Sources []struct {
			ConfigMap *struct{ Name string } `yaml:"configMap"`
			Secret    *struct {
				Name  string
				Items []struct {
					Key, Path string
					Mode      *int
				}
			}
		}
	}
}

type k8sObject struct {
	Kind     string
	Metadata struct{ Name string }
	Data     map[string]string
	Spec     struct {
		Replicas int
		Template struct {
			Spec struct {
				Containers      []container
				Volumes         []volume
				SecurityContext struct {
					FSGroup *int64 `yaml:"fsGroup"`
				} `yaml:"securityContext"`
			}
		}
	}
}

// renderChart runs `helm template` on deploy/helm/benchline with values
// pointing at this run's servers.
func renderChart(ctx context.Context, t *testing.T, root string, values string) rendered {
	t.Helper()
	vf := filepath.Join(root, "values.yaml")
	if err := os.WriteFile(vf, []byte(values), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := run(ctx, cleanEnv(), cacheBin(t, "helm"), "template", "realstack", "../helm/benchline", "--kube-version", "1.33.0", "-f", vf)
	if err != nil {
		t.Fatalf("realstack: render the chart: %v", err)
	}
	r := rendered{manifests: out}
	dec := yaml.NewDecoder(strings.NewReader(out))
	for {
		var o k8sObject
		if err := dec.Decode(&o); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("realstack: rendered chart: %v", err)
		}
		switch {
		case o.Kind == "ConfigMap" && o.Data["config.yaml"] != "":
			r.config, r.configMap = o.Data["config.yaml"], o.Data
		case o.Kind == "Deployment" && len(o.Spec.Template.Spec.Containers) > 0:
			c := o.Spec.Template.Spec.Containers[0]
			switch q := argAfter(c.Args, "--queues"); {
			case len(c.Args) > 0 && c.Args[0] == "serve-baselines":
				r.baselines = c
			case q == "main":
				r.main, r.mainN, r.mainVolumes = c, o.Spec.Replicas, o.Spec.Template.Spec.Volumes
				r.mainFSGroup = o.Spec.Template.Spec.SecurityContext.FSGroup
			case q == "sandbox":
				r.sandbox, r.sandboxN = c, o.Spec.Replicas
			}
		}
	}
	if r.config == "" || r.main.Args == nil || r.sandbox.Args == nil || r.baselines.Args == nil {
		t.Fatalf("realstack: the rendered chart lacks the ConfigMap, a worker or the baselines Deployment:\n%s", out)
	}
	return r
}

func argAfter(args []string, flag string) string {
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// withArg returns args with the value after flag replaced.
func withArg(args []string, flag, value string) []string {
	out := append([]string(nil), args...)
	for i, a := range out {
		if a == flag && i+1 < len(out) {
			out[i+1] = value
		}
	}
	return out
}

// mountConfig lays out under dir what the main worker pod sees where its
// config volume is mounted, as the kubelet would project it: the
// ConfigMap's files and each item of a projected Secret (secrets: the
// Secrets' data by name) at its path and mode. The chart's config.yaml
// names its files under the mount path; they are moved to dir, as
// BENCHLINE_CONFIG is (containerEnv). It returns the config file's path.
func mountConfig(t *testing.T, r rendered, dir string, secrets map[string]map[string][]byte) string {
	t.Helper()
	mountPath := ""
	for _, e := range r.main.Env {
		if e.Name == "BENCHLINE_CONFIG" {
			mountPath = filepath.Dir(e.Value)
		}
	}
	var vol *volume
	for _, m := range r.main.VolumeMounts {
		if m.MountPath == mountPath {
			for i := range r.mainVolumes {
				if r.mainVolumes[i].Name == m.Name {
					vol = &r.mainVolumes[i]
				}
			}
		}
	}
	if mountPath == "" || vol == nil {
		t.Fatalf("realstack: the main worker mounts no volume where BENCHLINE_CONFIG is (%q):\n%s", mountPath, r.manifests)
	}
	write := func(rel string, b []byte, mode os.FileMode) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, mode); err != nil {
			t.Fatal(err)
		}
	}
	configMap := func() {
		for k, v := range r.configMap {
			if k == "config.yaml" {
				v = strings.ReplaceAll(v, mountPath+"/", dir+"/")
			}
			write(k, []byte(v), 0o644)
		}
	}
	switch {
	case vol.ConfigMap != nil:
		configMap()
	case vol.Projected != nil:
		for _, src := range vol.Projected.Sources {
			switch {
			case src.ConfigMap != nil:
				configMap()
			case src.Secret != nil:
				data, ok := secrets[src.Secret.Name]
				if !ok {
					t.Fatalf("realstack: the chart projects Secret %q, which this test does not have", src.Secret.Name)
				}
				for _, it := range src.Secret.Items {
					b, ok := data[it.Key]
					if !ok {
						t.Fatalf("realstack: the chart projects key %q of Secret %q, which it lacks", it.Key, src.Secret.Name)
					}
					mode := os.FileMode(0o644)
					if it.Mode != nil {
						mode = os.FileMode(*it.Mode)
					}
					write(it.Path, b, mode)
				}
			}
		}
	default:
		t.Fatalf("realstack: the config volume %q is neither a ConfigMap nor a projection", vol.Name)
	}
	return filepath.Join(dir, "config.yaml")
}

// containerEnv is the container's environment as the pod would have it:
// the chart's variables (BENCHLINE_CONFIG moved to where this run keeps
// the ConfigMap's file) plus the secret's.
func containerEnv(c container, configPath string, secret []string) []string {
	env := cleanEnv()
	for _, e := range c.Env {
		v := e.Value
		if e.Name == "BENCHLINE_CONFIG" {
			v = configPath
		}
		env = append(env, e.Name+"="+v)
	}
	return append(env, secret...)
}

// minio starts MinIO as the dev stack does and creates the bucket.
func startMinIO(ctx context.Context, t *testing.T, root string) (port int) {
	t.Helper()
	port = freePort(t)
	env := append(cleanEnv(), "MINIO_ROOT_USER="+config.DevAccessKey, "MINIO_ROOT_PASSWORD="+config.DevSecretKey,
		"MINIO_BROWSER=off", "MINIO_UPDATE=off", "MINIO_CI_CD=1")
	startProc(t, root, "minio", env, cacheBin(t, "minio"), "server", filepath.Join(root, "s3"), "--address", fmt.Sprintf("127.0.0.1:%d", port), "--quiet")
	waitFor(ctx, t, "MinIO", time.Minute, func() error {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/minio/health/ready", port))
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	})
	return port
}

func s3Store(ctx context.Context, t *testing.T, port int) *s3blob.Store {
	t.Helper()
	st, err := s3blob.New(ctx, s3blob.Config{Endpoint: fmt.Sprintf("http://127.0.0.1:%d", port), Region: "us-east-1", Bucket: "benchline",
		PathStyle: true, AccessKeyID: config.DevAccessKey, SecretAccessKey: secret.New(config.DevSecretKey)})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(ctx, t, "bucket", time.Minute, func() error { return st.EnsureBucket(ctx) })
	return st
}

// logTail returns the end of a process's log, for failure messages.
func logTail(root, name string) string {
	b, _ := os.ReadFile(filepath.Join(root, "logs", name+".log"))
	return lastLines(string(b), 30)
}
