package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/benchline/benchline/internal/blob/s3blob"
	"github.com/benchline/benchline/internal/config"
	"github.com/benchline/benchline/internal/devstack"
	"github.com/benchline/benchline/internal/gateway"
	"github.com/benchline/benchline/internal/metrics"
	"github.com/benchline/benchline/internal/modelapi"
)

const chart = "helm/benchline"

// kubeVersion is the cluster version `helm template` renders for (helm's
// default, 1.20, is below the chart's kubeVersion); the sandbox's pod user
// namespaces (hostUsers, procMount Unmasked) need 1.33 or later.
const kubeVersion = "1.33.0"

// helmBin is the helm that `make setup` caches.
func helmBin(t *testing.T) string {
	t.Helper()
	cache := os.Getenv("BENCHLINE_CACHE")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache", "benchline")
	}
	p := filepath.Join(cache, "bin", "helm")
	if _, err := os.Stat(p); err != nil {
		if q, err := exec.LookPath("helm"); err == nil {
			return q
		}
		t.Fatalf("helm not found at %s nor on PATH: run `make setup`", p)
	}
	return p
}

func helm(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(helmBin(t), args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		return stdout.String(), fmt.Errorf("helm %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// rendered are the objects of one `helm template`, decoded strictly.
type rendered struct {
	deployments map[string]*appsv1.Deployment
	services    map[string]*corev1.Service
	configMaps  map[string]*corev1.ConfigMap
	jobs        map[string]*batchv1.Job
	accounts    map[string]*corev1.ServiceAccount
}

// decode splits a multi-document stream and decodes each object into its
// Kubernetes API type, rejecting unknown fields (a misspelt or misplaced
// key) and any kind the chart is not meant to render.
func decode(t *testing.T, out string) rendered {
	t.Helper()
	r := rendered{map[string]*appsv1.Deployment{}, map[string]*corev1.Service{}, map[string]*corev1.ConfigMap{},
		map[string]*batchv1.Job{}, map[string]*corev1.ServiceAccount{}}
	docs := regexp.MustCompile(`(?m)^---\s*$`).Split(out, -1)
	n := 0
	for _, doc := range docs {
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
			t.Fatalf("a rendered document is not YAML: %v\n%s", err, doc)
		}
		if head.Kind == "" {
			continue // comments only
		}
		n++
		strict := func(into any) {
			t.Helper()
			if err := yaml.UnmarshalStrict([]byte(doc), into); err != nil {
				t.Fatalf("%s %s does not decode strictly into the Kubernetes API type: %v\n%s", head.Kind, head.Metadata.Name, err, doc)
			}
		}
		key := head.APIVersion + "/" + head.Kind
		switch key {
		case "apps/v1/Deployment":
			o := &appsv1.Deployment{}
			strict(o)
			r.deployments[o.Name] = o
		case "v1/Service":
			o := &corev1.Service{}
			strict(o)
			r.services[o.Name] = o
		case "v1/ConfigMap":
			o := &corev1.ConfigMap{}
			strict(o)
			r.configMaps[o.Name] = o
		case "batch/v1/Job":
			o := &batchv1.Job{}
			strict(o)
			r.jobs[o.Name] = o
		case "v1/ServiceAccount":
			o := &corev1.ServiceAccount{}
			strict(o)
			r.accounts[o.Name] = o
		default:
			t.Fatalf("unexpected object %s %s", key, head.Metadata.Name)
		}
	}
	if n == 0 {
		t.Fatal("helm template rendered no object")
	}
	return r
}

func hasArgs(args []string, want ...string) bool {
	for i := range args {
		if i+len(want) <= len(args) && slices.Equal(args[i:i+len(want)], want) {
			return true
		}
	}
	return false
}

// checkWorker checks what every worker pod needs: its queue, metrics on the
// port the probes use, readiness on /healthz, the config file mounted where
// BENCHLINE_CONFIG points, and a selector that selects its own pods.
func checkWorker(t *testing.T, d *appsv1.Deployment, queue string, replicas int32, secret string) {
	t.Helper()
	if d.Spec.Replicas == nil || *d.Spec.Replicas != replicas {
		t.Errorf("%s: replicas %v, want %d", d.Name, d.Spec.Replicas, replicas)
	}
	for k, v := range d.Spec.Selector.MatchLabels {
		if d.Spec.Template.Labels[k] != v {
			t.Errorf("%s: selector %s=%s does not match the pod's labels %v", d.Name, k, v, d.Spec.Template.Labels)
		}
	}
	if len(d.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("%s: %d containers", d.Name, len(d.Spec.Template.Spec.Containers))
	}
	c := d.Spec.Template.Spec.Containers[0]
	if !hasArgs(c.Args, "worker", "--queues", queue) || !hasArgs(c.Args, "--metrics-addr", "0.0.0.0:9090") {
		t.Errorf("%s: args %q, want worker --queues %s and --metrics-addr 0.0.0.0:9090", d.Name, c.Args, queue)
	}
	if len(c.Ports) != 1 || c.Ports[0].Name != "metrics" || c.Ports[0].ContainerPort != 9090 {
		t.Errorf("%s: ports %+v, want metrics 9090", d.Name, c.Ports)
	}
	rp := c.ReadinessProbe
	if rp == nil || rp.HTTPGet == nil || rp.HTTPGet.Path != "/healthz" || rp.HTTPGet.Port.String() != "metrics" {
		t.Errorf("%s: readiness probe %+v, want GET /healthz on port metrics", d.Name, rp)
	}
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	if env["BENCHLINE_CONFIG"] != "/etc/benchline/config.yaml" {
		t.Errorf("%s: BENCHLINE_CONFIG %q", d.Name, env["BENCHLINE_CONFIG"])
	}
	mounted := false
	for _, m := range c.VolumeMounts {
		mounted = mounted || (m.Name == "config" && m.MountPath == "/etc/benchline" && m.ReadOnly)
	}
	if !mounted {
		t.Errorf("%s: the config volume is not mounted read-only at /etc/benchline: %+v", d.Name, c.VolumeMounts)
	}
	gotSecret := ""
	for _, ef := range c.EnvFrom {
		if ef.SecretRef != nil {
			gotSecret = ef.SecretRef.Name
		}
	}
	if gotSecret != secret {
		t.Errorf("%s: envFrom secret %q, want %q", d.Name, gotSecret, secret)
	}
	if c.SecurityContext == nil || c.SecurityContext.ReadOnlyRootFilesystem == nil || !*c.SecurityContext.ReadOnlyRootFilesystem ||
		c.SecurityContext.AllowPrivilegeEscalation == nil || *c.SecurityContext.AllowPrivilegeEscalation {
		t.Errorf("%s: want a read-only root file system and no privilege escalation: %+v", d.Name, c.SecurityContext)
	}
}

// checkConfig loads the rendered config.yaml (and providers.yaml) with
// benchline's own loaders, as a worker would at start.
func checkConfig(t *testing.T, cm *corev1.ConfigMap, want config.Config) {
	t.Helper()
	dir := t.TempDir()
	cfgText := cm.Data["config.yaml"]
	if p, ok := cm.Data["providers.yaml"]; ok {
		pf := filepath.Join(dir, "providers.yaml")
		if err := os.WriteFile(pf, []byte(p), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := gateway.LoadConfig(strings.NewReader(p), func(string) (string, bool) { return "", false }); err != nil {
			t.Errorf("rendered providers.yaml does not load: %v\n%s", err, p)
		}
		cfgText = strings.ReplaceAll(cfgText, "/etc/benchline/providers.yaml", pf)
	}
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte(cfgText), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := config.Load(path, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatalf("rendered config.yaml does not load: %v\n%s", err, cfgText)
	}
	if got.Temporal != want.Temporal || got.S3.Bucket != want.S3.Bucket || got.S3.Endpoint != want.S3.Endpoint ||
		got.S3.PathStyle != want.S3.PathStyle || got.S3.Prefix != want.S3.Prefix || got.S3.Region != want.S3.Region ||
		got.Models.WorkerShare != want.Models.WorkerShare || got.Models.CacheTTL != want.Models.CacheTTL {
		t.Errorf("config.yaml loads as %+v / %+v / %+v, want %+v / %+v / %+v", got.Temporal, got.S3, got.Models, want.Temporal, want.S3, want.Models)
	}
}

func TestChartRendersValidObjects(t *testing.T) {
	if out, err := helm(t, "lint", "--strict", chart); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	tests := []struct {
		values  string
		check   func(t *testing.T, r rendered)
		release string
	}{
		{"", func(t *testing.T, r rendered) {
			checkWorker(t, r.deployments["bl-benchline-main"], "main", 2, "")
			sb := r.deployments["bl-benchline-sandbox"]
			checkWorker(t, sb, "sandbox", 1, "")
			checkSandbox(t, sb, "2Gi")
			main := r.deployments["bl-benchline-main"].Spec.Template.Spec
			if sc := main.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser == 0 {
				t.Errorf("main pods must run as non-root: %+v", sc)
			}
			if c := main.Containers[0]; !hasArgs(c.Args, "--memory-limit-mb", "921") {
				t.Errorf("main: --memory-limit-mb not 90%% of the 1Gi limit: %q", c.Args)
			}
			if len(r.jobs) != 0 || r.deployments["bl-benchline-baselines"] != nil {
				t.Errorf("defaults render a board job or baselines: %v", r.jobs)
			}
			checkConfig(t, r.configMaps["bl-benchline-config"], config.Config{
				Temporal: config.Temporal{Address: "temporal-frontend.temporal.svc.cluster.local:7233", Namespace: "default", TaskQueue: "benchline"},
				S3:       s3blob.Config{Bucket: "benchline", Region: "us-east-1"},
				Models:   config.Models{WorkerShare: 2, CacheTTL: 168 * 3600e9}})
			checkMetricsService(t, r, "bl-benchline-metrics")
		}, "bl"},
		{"ci/team-values.yaml", func(t *testing.T, r rendered) {
			checkWorker(t, r.deployments["team-benchline-main"], "main", 3, "benchline-keys")
			sb := r.deployments["team-benchline-sandbox"]
			checkWorker(t, sb, "sandbox", 2, "benchline-keys")
			checkSandbox(t, sb, "4Gi")
			if !hasArgs(sb.Spec.Template.Spec.Containers[0].Args, "--sandbox-activities", "2") {
				t.Errorf("sandbox args %q", sb.Spec.Template.Spec.Containers[0].Args)
			}
			if r.deployments["team-benchline-baselines"] == nil || r.services["team-benchline-baselines"] == nil {
				t.Fatal("baselines enabled but not rendered")
			}
			for _, c := range []corev1.Container{r.deployments["team-benchline-main"].Spec.Template.Spec.Containers[0], sb.Spec.Template.Spec.Containers[0]} {
				if v := envOf(c, "BENCHLINE_BASELINE_URL"); v != "http://team-benchline-baselines:8400/v1" {
					t.Errorf("%s: BENCHLINE_BASELINE_URL %q, want the chart's baseline service", c.Name, v)
				}
			}
			checkConfig(t, r.configMaps["team-benchline-config"], config.Config{
				Temporal: config.Temporal{Address: "temporal-frontend.temporal.svc.cluster.local:7233", Namespace: "evals", TaskQueue: "benchline"},
				S3:       s3blob.Config{Bucket: "evals", Endpoint: "http://minio.minio.svc.cluster.local:9000", PathStyle: true, Region: "us-east-1"},
				Models:   config.Models{WorkerShare: 3, CacheTTL: 168 * 3600e9}})
			checkMetricsService(t, r, "team-benchline-metrics")
		}, "team"},
		{"ci/cloud-values.yaml", func(t *testing.T, r rendered) {
			main := r.deployments["benchline-main"]
			checkWorker(t, main, "main", 4, "benchline-cloud")
			if r.deployments["benchline-sandbox"] != nil {
				t.Error("sandbox disabled but rendered")
			}
			if img := main.Spec.Template.Spec.Containers[0].Image; img != "ghcr.io/example/benchline:1.0.0" {
				t.Errorf("image %q", img)
			}
			if !hasArgs(main.Spec.Template.Spec.Containers[0].Args, "--memory-limit-mb", "1500") {
				t.Errorf("main args %q", main.Spec.Template.Spec.Containers[0].Args)
			}
			if sa := r.accounts["benchline"]; sa == nil || sa.Annotations["eks.amazonaws.com/role-arn"] == "" {
				t.Errorf("service account without its IAM role annotation: %+v", sa)
			}
			cm := r.configMaps["benchline-config"]
			checkConfig(t, cm, config.Config{
				Temporal: config.Temporal{Address: "evals.a1b2c.tmprl.cloud:7233", Namespace: "evals.a1b2c", TaskQueue: "benchline"},
				S3:       s3blob.Config{Bucket: "acme-evals", Prefix: "benchline", Region: "eu-west-1"},
				Models:   config.Models{WorkerShare: 4, CacheTTL: 72 * 3600e9}})
			job := r.jobs["benchline-boards"]
			if job == nil {
				t.Fatal("boards given but no job rendered")
			}
			if job.Spec.ActiveDeadlineSeconds == nil || job.Spec.BackoffLimit == nil {
				t.Error("the board job is unbounded")
			}
			cs := job.Spec.Template.Spec.Containers
			for i, b := range []struct{ name, cron string }{{"nightly", "0 3 * * *"}, {"weekly-code", "0 5 * * 1"}} {
				if i >= len(cs) || !hasArgs(cs[i].Args, "leaderboard", "schedule", b.name, "--cron", b.cron, "--file", "/etc/benchline/board-"+b.name+".yaml") {
					t.Errorf("board %s: job containers %+v", b.name, cs)
					continue
				}
				var board struct {
					Name       string           `json:"name"`
					Benchmarks []map[string]any `json:"benchmarks"`
					Models     []any            `json:"models"`
				}
				if err := yaml.UnmarshalStrict([]byte(cm.Data["board-"+b.name+".yaml"]), &board); err != nil || board.Name != b.name || len(board.Benchmarks) == 0 || len(board.Models) == 0 {
					t.Errorf("board file %s: %+v (%v)", b.name, board, err)
				}
			}
		}, "benchline"},
	}
	for _, tt := range tests {
		t.Run(tt.release+"/"+filepath.Base(tt.values), func(t *testing.T) {
			args := []string{"template", tt.release, chart, "--kube-version", kubeVersion}
			if tt.values != "" {
				args = append(args, "-f", filepath.Join(chart, tt.values))
				if out, err := helm(t, "lint", "--strict", chart, "-f", filepath.Join(chart, tt.values)); err != nil {
					t.Fatalf("%v\n%s", err, out)
				}
			}
			out, err := helm(t, args...)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, decode(t, out))
		})
	}
}

// TestChartRefusesBadValues: values the chart cannot honour fail the
// render, naming the value.
func TestChartRefusesBadValues(t *testing.T) {
	tests := []struct {
		set  []string
		want string
	}{
		{[]string{"logs.format=xml"}, `logs.format "xml": want json or text`},
		{[]string{"temporal.address="}, "temporal.address is required"},
		{[]string{"boards[0].name=bad name", "boards[0].cron=@daily", "boards[0].board.name=x"}, `boards[0].name "bad name": want word characters and dashes`},
		{[]string{"boards[0].name=nightly", "boards[0].board.name=nightly"}, "boards[].cron is required"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			args := []string{"template", "bad", chart, "--kube-version", kubeVersion}
			for _, s := range tt.set {
				args = append(args, "--set", s)
			}
			_, err := helm(t, args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("helm template --set %v: %v, want an error containing %q", tt.set, err, tt.want)
			}
		})
	}
}

func envOf(c corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

// checkSandbox checks what bubblewrap needs (docs/DEPLOY.md).
func checkSandbox(t *testing.T, d *appsv1.Deployment, size string) {
	t.Helper()
	spec := d.Spec.Template.Spec
	c := spec.Containers[0]
	var shm *corev1.Volume
	for i, v := range spec.Volumes {
		if v.Name == "workdir" {
			shm = &spec.Volumes[i]
		}
	}
	if shm == nil || shm.EmptyDir == nil || shm.EmptyDir.Medium != corev1.StorageMediumMemory ||
		shm.EmptyDir.SizeLimit == nil || shm.EmptyDir.SizeLimit.String() != size {
		t.Errorf("sandbox work dir: %+v, want an emptyDir of medium Memory, sizeLimit %s", shm, size)
	}
	onShm := false
	for _, m := range c.VolumeMounts {
		onShm = onShm || (m.Name == "workdir" && m.MountPath == "/dev/shm")
	}
	if !onShm {
		t.Errorf("the work dir is not mounted at /dev/shm: %+v", c.VolumeMounts)
	}
	sc := c.SecurityContext
	if sc == nil || sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeUnconfined ||
		sc.AppArmorProfile == nil || sc.AppArmorProfile.Type != corev1.AppArmorProfileTypeUnconfined ||
		sc.ProcMount == nil || *sc.ProcMount != corev1.UnmaskedProcMount {
		t.Errorf("sandbox security context %+v: want seccomp and AppArmor unconfined and an unmasked /proc", sc)
	}
	if sc != nil && sc.Capabilities != nil {
		for _, c := range []corev1.Capability{"SETUID", "SETGID", "KILL", "CHOWN"} {
			if !slices.Contains(sc.Capabilities.Add, c) {
				t.Errorf("sandbox capabilities %v lack %s", sc.Capabilities.Add, c)
			}
		}
		if !slices.Contains(sc.Capabilities.Drop, "ALL") || slices.Contains(sc.Capabilities.Add, "SYS_ADMIN") {
			t.Errorf("sandbox capabilities: drop %v, add %v: want ALL dropped and no SYS_ADMIN", sc.Capabilities.Drop, sc.Capabilities.Add)
		}
	}
	if spec.HostUsers == nil || *spec.HostUsers {
		t.Errorf("sandbox pods: hostUsers %v, want false (a user namespace of their own)", spec.HostUsers)
	}
}

// checkMetricsService checks the metrics Service selects both workers' pods
// and targets their metrics port.
func checkMetricsService(t *testing.T, r rendered, name string) {
	t.Helper()
	svc := r.services[name]
	if svc == nil {
		t.Fatalf("no metrics service %s", name)
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort.String() != "metrics" {
		t.Errorf("metrics service ports %+v", svc.Spec.Ports)
	}
	selected := 0
	for _, d := range r.deployments {
		match := true
		for k, v := range svc.Spec.Selector {
			match = match && d.Spec.Template.Labels[k] == v
		}
		if match {
			selected++
			if !strings.HasSuffix(d.Name, "-main") && !strings.HasSuffix(d.Name, "-sandbox") {
				t.Errorf("metrics service selects %s, not a worker", d.Name)
			}
		}
	}
	if selected != 2 {
		t.Errorf("metrics service selects %d deployments, want both workers", selected)
	}
}

func loadCompose(t *testing.T, env []string) error {
	t.Helper()
	_, err := composeProject(env)
	return err
}

func composeProject(env []string) (*composeProj, error) {
	opts, err := cli.NewProjectOptions([]string{"compose/compose.yaml"}, cli.WithEnv(env), cli.WithWorkingDirectory("compose"))
	if err != nil {
		return nil, err
	}
	p, err := opts.LoadProject(context.Background())
	if err != nil {
		return nil, err
	}
	return &composeProj{p}, nil
}

func TestComposeFile(t *testing.T) {
	pj, err := composeProject([]string{"POSTGRES_PASSWORD=pg-secret", "MINIO_ROOT_PASSWORD=minio-secret", "BENCHLINE_MAIN_REPLICAS=3"})
	if err != nil {
		t.Fatalf("compose.yaml does not load: %v", err)
	}
	p := pj.Project
	for _, s := range []string{"postgresql", "temporal", "temporal-ui", "minio", "minio-setup", "baselines", "worker-main", "worker-sandbox"} {
		if _, ok := p.Services[s]; !ok {
			t.Errorf("service %s missing", s)
		}
	}
	// Workers get every variable `benchline dev --env-file` writes.
	keys := []string{}
	for _, kv := range (&devstack.Running{Stack: &devstack.Stack{}}).EnvVars() {
		keys = append(keys, kv[0])
	}
	keys = append(keys, "BENCHLINE_WORKER_SHARE")
	for _, name := range []string{"worker-main", "worker-sandbox"} {
		s := p.Services[name]
		for _, k := range keys {
			if _, ok := s.Environment[k]; !ok {
				t.Errorf("%s: %s not set", name, k)
			}
		}
		if v := s.Environment["AWS_SECRET_ACCESS_KEY"]; v == nil || *v != "minio-secret" {
			t.Errorf("%s: AWS_SECRET_ACCESS_KEY is not MinIO's password", name)
		}
		if v := s.Environment["BENCHLINE_WORKER_SHARE"]; v == nil || *v != "3" {
			t.Errorf("%s: BENCHLINE_WORKER_SHARE %v, want the main replicas (3)", name, v)
		}
		if v := s.Environment["BENCHLINE_BASELINE_URL"]; v == nil || *v != "http://baselines:8400/v1" {
			t.Errorf("%s: BENCHLINE_BASELINE_URL %v", name, v)
		}
		if !hasArgs(s.Command, "--metrics-addr", "0.0.0.0:9090") || !slices.Contains(s.CapDrop, "ALL") || !s.ReadOnly {
			t.Errorf("%s: command %q, cap_drop %v, read_only %v", name, s.Command, s.CapDrop, s.ReadOnly)
		}
	}
	if !hasArgs(p.Services["worker-main"].Command, "worker", "--queues", "main") || !hasArgs(p.Services["worker-sandbox"].Command, "worker", "--queues", "sandbox") {
		t.Error("workers do not serve their queues")
	}
	sb := p.Services["worker-sandbox"]
	for _, o := range []string{"seccomp=unconfined", "apparmor=unconfined", "systempaths=unconfined"} {
		if !slices.Contains(sb.SecurityOpt, o) {
			t.Errorf("worker-sandbox: security_opt %v lacks %s", sb.SecurityOpt, o)
		}
	}
	if sb.ShmSize < 1<<30 {
		t.Errorf("worker-sandbox: shm_size %d, want at least 1 GiB (the sandbox uses /dev/shm only then)", sb.ShmSize)
	}
	if sb.Build == nil || sb.Build.Target != "sandbox" || p.Services["worker-main"].Build.Target != "runtime" {
		t.Error("workers are not built from the Dockerfile's runtime and sandbox targets")
	}
	if !hasArgs(p.Services["baselines"].Command, "serve-baselines", "--addr", "0.0.0.0:8400") {
		t.Errorf("baselines: command %q", p.Services["baselines"].Command)
	}
	if v := p.Services["temporal"].Environment["POSTGRES_PWD"]; v == nil || *v != "pg-secret" {
		t.Error("temporal does not get PostgreSQL's password")
	}

	// Without the passwords the file does not load, and says which is missing.
	for _, missing := range []string{"POSTGRES_PASSWORD", "MINIO_ROOT_PASSWORD"} {
		var env []string
		for _, kv := range []string{"POSTGRES_PASSWORD=a", "MINIO_ROOT_PASSWORD=b"} {
			if !strings.HasPrefix(kv, missing+"=") {
				env = append(env, kv)
			}
		}
		if err := loadCompose(t, env); err == nil || !strings.Contains(err.Error(), missing) {
			t.Errorf("without %s: %v, want an error naming it", missing, err)
		}
	}
}

// TestDockerfile checks the Dockerfile's structure, cheaply, in `make
// test` (`make test-containers` builds it with podman): its stages, that COPY --from names a stage, that
// the runtime image is non-root, and that the sandbox stage installs what
// the language runners call, with the TypeScript setup.sh pins.
func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile("docker/Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	type instr struct{ cmd, args string }
	stages := map[string][]instr{}
	var order []string
	cur := ""
	text := strings.ReplaceAll(string(b), "\\\n", " ")
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cmd, args, _ := strings.Cut(line, " ")
		cmd = strings.ToUpper(cmd)
		if !slices.Contains([]string{"FROM", "ARG", "WORKDIR", "COPY", "RUN", "USER", "EXPOSE", "ENTRYPOINT", "CMD", "ENV"}, cmd) {
			t.Errorf("unexpected instruction %q", line)
		}
		if cmd == "FROM" {
			f := strings.Fields(args)
			if len(f) != 3 || !strings.EqualFold(f[1], "AS") {
				t.Fatalf("FROM without a stage name: %q", line)
			}
			cur = f[2]
			order = append(order, cur)
		}
		if cur != "" {
			stages[cur] = append(stages[cur], instr{cmd, args})
		}
	}
	if !slices.Equal(order, []string{"build", "runtime", "sandbox"}) {
		t.Fatalf("stages %v, want build, runtime, sandbox", order)
	}
	last := func(stage, cmd string) string {
		v := ""
		for _, in := range stages[stage] {
			if in.cmd == cmd {
				v = in.args
			}
		}
		return v
	}
	for _, st := range order {
		for _, in := range stages[st] {
			if in.cmd == "COPY" && strings.HasPrefix(in.args, "--from=") {
				from := strings.TrimPrefix(strings.Fields(in.args)[0], "--from=")
				if i := slices.Index(order, from); i < 0 || i >= slices.Index(order, st) {
					t.Errorf("%s: COPY --from=%s names no earlier stage", st, from)
				}
			}
		}
	}
	if u := last("runtime", "USER"); u == "" || strings.HasPrefix(u, "0") || strings.HasPrefix(u, "root") {
		t.Errorf("runtime USER %q: want a non-root user", u)
	}
	for _, st := range []string{"runtime", "sandbox"} {
		var ep []string
		if err := json.Unmarshal([]byte(last(st, "ENTRYPOINT")), &ep); err != nil || len(ep) != 1 || ep[0] != "/usr/local/bin/benchline" {
			t.Errorf("%s: ENTRYPOINT %q (%v)", st, last(st, "ENTRYPOINT"), err)
		}
		var cmd []string
		if err := json.Unmarshal([]byte(last(st, "CMD")), &cmd); err != nil || !hasArgs(cmd, "--metrics-addr", "0.0.0.0:9090") {
			t.Errorf("%s: CMD %q (%v)", st, last(st, "CMD"), err)
		}
	}
	var runs strings.Builder
	for _, in := range stages["sandbox"] {
		if in.cmd == "RUN" {
			runs.WriteString(in.args + " ")
		}
	}
	// Packages of the binaries internal/sandbox/lang calls (Debian 12).
	pkgs := strings.Fields(runs.String())
	for _, p := range []string{"bubblewrap", "python3", "nodejs", "php-cli", "bash", "g++", "openjdk-17-jdk-headless",
		"mono-mcs", "mono-runtime", "libmono-system-numerics4.0-cil"} {
		if !slices.Contains(pkgs, p) {
			t.Errorf("sandbox stage does not install %s", p)
		}
	}
	setup, err := os.ReadFile("dev/setup.sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, pin := range regexp.MustCompile(`(typescript|@types/node)@[0-9.]+`).FindAllString(string(setup), -1) {
		if !slices.Contains(pkgs, pin) {
			t.Errorf("sandbox stage does not install %s, the version setup.sh pins", pin)
		}
	}
}

// TestGrafanaDashboard: the dashboard is JSON Grafana can import (unique
// panel ids, a query per panel) and every benchline metric it queries is
// one the worker exports.
func TestGrafanaDashboard(t *testing.T) {
	b, err := os.ReadFile("grafana/benchline.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		UID    string `json:"uid"`
		Title  string `json:"title"`
		Panels []struct {
			ID      int    `json:"id"`
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("dashboard is not JSON: %v", err)
	}
	if d.UID == "" || d.Title == "" || len(d.Panels) == 0 {
		t.Fatalf("dashboard uid %q, title %q, %d panels", d.UID, d.Title, len(d.Panels))
	}
	// Every family the worker exports, each observed once so it is gathered.
	m := metrics.New()
	m.ModelCall("p", "m", metrics.StatusOK, modelapi.Usage{PromptTokens: 1, CompletionTokens: 1, CostUSD: 1})
	m.ModelCall("p", "m", metrics.StatusCacheHit, modelapi.Usage{})
	m.LimiterWait("p", 0)
	m.SandboxRun("python", "run", "ok", 0)
	m.SampleDone("RunShard", "ok")
	m.ShardDone("RunShard", 0, nil)
	m.WatchLimits(func(emit func(string, float64, int)) { emit("p", 1, 0) })
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, f := range fams {
		known[f.GetName()] = true
	}
	ids := map[int]bool{}
	used := map[string]bool{}
	name := regexp.MustCompile(`\bbenchline_[a-z_]+`)
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("panel id %d repeated", p.ID)
		}
		ids[p.ID] = true
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			for _, n := range name.FindAllString(tg.Expr, -1) {
				base := n
				for _, suf := range []string{"_bucket", "_sum", "_count"} {
					if s, ok := strings.CutSuffix(n, suf); ok && known[s] {
						base = s
					}
				}
				if !known[base] {
					t.Errorf("panel %q queries %s, which the worker does not export", p.Title, n)
				}
				used[base] = true
			}
		}
	}
	for n := range known {
		if strings.HasPrefix(n, "benchline_") && !used[n] {
			t.Errorf("metric %s has no panel", n)
		}
	}
}

// TestChartMountsTemporalTLS: with temporal.tlsSecret every worker pod sees
// the Secret's certificate, key and CA under /etc/benchline/temporal-tls,
// and the configuration file names them.
func TestChartMountsTemporalTLS(t *testing.T) {
	out, err := helm(t, "template", "bl", chart, "--kube-version", kubeVersion,
		"--set", "temporal.tlsSecret=temporal-client", "--set", "temporal.tlsServerName=temporal")
	if err != nil {
		t.Fatal(err)
	}
	r := decode(t, out)
	for _, name := range []string{"bl-benchline-main", "bl-benchline-sandbox"} {
		d := r.deployments[name]
		if d == nil {
			t.Fatalf("%s not rendered", name)
		}
		var paths []string
		for _, v := range d.Spec.Template.Spec.Volumes {
			if v.Name != "config" || v.Projected == nil {
				continue
			}
			for _, s := range v.Projected.Sources {
				if s.Secret != nil && s.Secret.Name == "temporal-client" {
					for _, it := range s.Secret.Items {
						paths = append(paths, it.Path)
					}
				}
			}
		}
		if want := []string{"temporal-tls/tls.crt", "temporal-tls/tls.key", "temporal-tls/ca.crt"}; !slices.Equal(paths, want) {
			t.Errorf("%s: config volume projects %q from the Secret, want %q", name, paths, want)
		}
	}
	cfgText := r.configMaps["bl-benchline-config"].Data["config.yaml"]
	for _, want := range []string{"tls_cert_file: /etc/benchline/temporal-tls/tls.crt", "tls_key_file: /etc/benchline/temporal-tls/tls.key",
		"tls_ca_file: /etc/benchline/temporal-tls/ca.crt", `tls_server_name: "temporal"`} {
		if !strings.Contains(cfgText, want) {
			t.Errorf("config.yaml lacks %q:\n%s", want, cfgText)
		}
	}
}
