package deploy

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	corev1 "k8s.io/api/core/v1"
)

// sandboxOpts is containers/sandbox-opts.txt: the sandbox container's
// security options that `make test-containers` runs the sandbox suite and
// the sandbox worker with (docs/DEPLOY.md, "The sandbox worker").
type sandboxOpts struct {
	drop, add                         []string
	seccomp, apparmor, unmaskProc, nn bool
}

func readSandboxOpts(t *testing.T) sandboxOpts {
	t.Helper()
	b, err := os.ReadFile("containers/sandbox-opts.txt")
	if err != nil {
		t.Fatal(err)
	}
	var o sandboxOpts
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		switch {
		case strings.HasPrefix(l, "--cap-drop="):
			o.drop = append(o.drop, strings.Split(strings.TrimPrefix(l, "--cap-drop="), ",")...)
		case strings.HasPrefix(l, "--cap-add="):
			o.add = append(o.add, strings.Split(strings.TrimPrefix(l, "--cap-add="), ",")...)
		case l == "--security-opt=seccomp=unconfined":
			o.seccomp = true
		case l == "--security-opt=apparmor=unconfined":
			o.apparmor = true
		case l == "--security-opt=unmask=/proc/*":
			o.unmaskProc = true
		case l == "--security-opt=no-new-privileges":
			o.nn = true
		default:
			t.Fatalf("containers/sandbox-opts.txt: %q: no chart or compose equivalent known to this test (add it here, to the chart and to compose.yaml)", l)
		}
	}
	slices.Sort(o.drop)
	slices.Sort(o.add)
	return o
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// TestSandboxOptionsAgree: the chart and the compose file give the sandbox
// worker exactly the security options the sandbox suite passed with inside
// the sandbox image: no capability more or less, no other relaxation.
func TestSandboxOptionsAgree(t *testing.T) {
	o := readSandboxOpts(t)
	out, err := helm(t, "template", "bl", chart, "--kube-version", kubeVersion)
	if err != nil {
		t.Fatal(err)
	}
	d := decode(t, out).deployments["bl-benchline-sandbox"]
	if d == nil {
		t.Fatal("no sandbox deployment rendered")
	}
	sc := d.Spec.Template.Spec.Containers[0].SecurityContext
	if sc == nil || sc.Capabilities == nil {
		t.Fatalf("chart: sandbox container security context %+v", sc)
	}
	var drop, add []string
	for _, c := range sc.Capabilities.Drop {
		drop = append(drop, string(c))
	}
	for _, c := range sc.Capabilities.Add {
		add = append(add, string(c))
	}
	if !slices.Equal(sorted(drop), o.drop) || !slices.Equal(sorted(add), o.add) {
		t.Errorf("chart: capabilities drop %v add %v; sandbox-opts.txt: drop %v add %v", drop, add, o.drop, o.add)
	}
	unconfined := func(p *corev1.SeccompProfile) bool { return p != nil && p.Type == corev1.SeccompProfileTypeUnconfined }
	if unconfined(sc.SeccompProfile) != o.seccomp || (sc.AppArmorProfile != nil && sc.AppArmorProfile.Type == corev1.AppArmorProfileTypeUnconfined) != o.apparmor ||
		(sc.ProcMount != nil && *sc.ProcMount == corev1.UnmaskedProcMount) != o.unmaskProc ||
		(sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation) != o.nn || (sc.Privileged != nil && *sc.Privileged) {
		t.Errorf("chart: sandbox security context %+v does not match sandbox-opts.txt %+v", sc, o)
	}

	pj, err := composeProject([]string{"POSTGRES_PASSWORD=pg", "MINIO_ROOT_PASSWORD=minio"})
	if err != nil {
		t.Fatal(err)
	}
	s := pj.Services["worker-sandbox"]
	if !slices.Equal(sorted(s.CapDrop), o.drop) || !slices.Equal(sorted(s.CapAdd), o.add) || s.Privileged {
		t.Errorf("compose: cap_drop %v cap_add %v privileged %v; sandbox-opts.txt: drop %v add %v", s.CapDrop, s.CapAdd, s.Privileged, o.drop, o.add)
	}
	// compose.yaml is written for docker compose: /proc unmasked is
	// systempaths=unconfined there (podman's unmask=/proc/*).
	var want []string
	for _, w := range []struct {
		on  bool
		opt string
	}{{o.seccomp, "seccomp=unconfined"}, {o.apparmor, "apparmor=unconfined"}, {o.unmaskProc, "systempaths=unconfined"}, {o.nn, "no-new-privileges:true"}} {
		if w.on {
			want = append(want, w.opt)
		}
	}
	if !slices.Equal(sorted(s.SecurityOpt), sorted(want)) {
		t.Errorf("compose: worker-sandbox security_opt %v, want exactly %v (sandbox-opts.txt)", s.SecurityOpt, want)
	}
}

// TestComposeLocalOverride: the override `make test-containers` brings
// compose.yaml up with (compose/compose.local.yaml) loads with it, changes
// no image, command, environment variable (but the two OpenAI ones it
// empties) or security setting, and only makes every image local
// (pull_policy never) and the bucket job retry.
func TestComposeLocalOverride(t *testing.T) {
	env := []string{"POSTGRES_PASSWORD=pg", "MINIO_ROOT_PASSWORD=minio"}
	base, err := composeProject(env)
	if err != nil {
		t.Fatal(err)
	}
	opts, err := cli.NewProjectOptions([]string{"compose/compose.yaml", "compose/compose.local.yaml"}, cli.WithEnv(env), cli.WithWorkingDirectory("compose"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := opts.LoadProject(context.Background())
	if err != nil {
		t.Fatalf("compose.yaml with compose.local.yaml: %v", err)
	}
	for name, s := range p.Services {
		b := base.Services[name]
		if s.PullPolicy != "never" {
			t.Errorf("%s: pull_policy %q, want never", name, s.PullPolicy)
		}
		if s.Image != b.Image || !slices.Equal(s.Command, b.Command) || !slices.Equal(s.SecurityOpt, b.SecurityOpt) ||
			!slices.Equal(s.CapAdd, b.CapAdd) || len(s.Environment) != len(b.Environment) || s.Privileged {
			t.Errorf("%s: the override changes more than pull_policy and restart", name)
		}
		if s.Restart != b.Restart && name != "minio-setup" {
			t.Errorf("%s: restart %q changed (only minio-setup's may be)", name, s.Restart)
		}
	}
	if len(p.Services) != len(base.Services) {
		t.Errorf("the override has %d services, compose.yaml %d", len(p.Services), len(base.Services))
	}
}
