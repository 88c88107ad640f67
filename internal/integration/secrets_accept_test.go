package integration

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/bfcl"
	"github.com/benchline/benchline/internal/blob"
)

// sentinelForms is every way a sentinel may be written down: itself, URL
// escaped, and base64 (standard and URL alphabets) at each of the three
// alignments it can start at inside a longer encoded text (the middle of
// its encoding, which does not depend on its neighbours).
func sentinelForms(s string) []string {
	forms := []string{s, url.QueryEscape(s), url.PathEscape(s)}
	for pad := 0; pad < 3; pad++ {
		src := strings.Repeat("\x00", pad) + s
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
			e := enc.EncodeToString([]byte(src))
			// drop the characters touched by the padding bytes before and the end after
			lo, hi := (pad*4+2)/3+1, len(e)-4
			if hi-lo >= 8 {
				forms = append(forms, e[lo:hi])
			}
		}
	}
	return forms
}

// TestSecretsNeverLeak is issue 37's secrets acceptance: a worker and the
// CLI with sentinel values for a model's API key (a providers-file entry
// with api_key_env), a board webhook's URL token (url_env) and signing
// secret (secret_env) run a full eval, a batch eval, a board refresh that
// delivers its webhook, runs publish and dataset publish. The provider
// checks that it gets the key, the receiver that it gets the token and a
// signature; then no sentinel, URL-escaped or base64, is in the CLI's
// output, the worker's log, any workflow history of the worker's queue
// (payloads decoded), any object in the bucket, or the release folder.
// Not covered here: the S3 secret key (the stack's MinIO has one fixed
// root key) and the Temporal API key (setting it turns on TLS, which the
// dev server does not speak).
func TestSecretsNeverLeak(t *testing.T) {
	const (
		modelKey   = "SENTINELmodelKey7q"
		hookToken  = "SENTINELhookTok9w"
		hookSecret = "SENTINELhookSec3e"
		queue      = "it-sentinel"
	)
	sentinels := []string{modelKey, hookToken, hookSecret}
	bin := buildBinary(t)
	if _, err := buildVia(t, bfcl.Name, datasets.Request{Source: bfcl.Embedded}); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	var badAuth, hookCalls, signed int
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+modelKey {
			mu.Lock()
			badAuth++
			mu.Unlock()
			http.Error(w, "bad key", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(chatAnswer)
	}))
	t.Cleanup(provider.Close)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if r.URL.Query().Get("token") == hookToken {
			hookCalls++
		}
		if strings.HasPrefix(r.Header.Get("X-Benchline-Signature"), "sha256=") {
			signed++
		}
	}))
	t.Cleanup(hook.Close)

	dir := t.TempDir()
	providers := filepath.Join(dir, "providers.yaml")
	if err := os.WriteFile(providers, []byte("providers:\n  sentinel:\n    base_url: "+provider.URL+
		"/v1\n    api_key_env: IT_SENTINEL_MODEL_KEY\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := workerEnv(queue, stack.BaselineURL, "BENCHLINE_PROVIDERS="+providers,
		"IT_SENTINEL_MODEL_KEY="+modelKey, "IT_SENTINEL_HOOK_URL="+hook.URL+"/hook?token="+hookToken,
		"IT_SENTINEL_HOOK_SECRET="+hookSecret)

	var workerLog lockedBuffer
	w := exec.Command(bin, "worker", "--queues", "main")
	w.Env, w.Stdout, w.Stderr = env, &workerLog, &workerLog
	w.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-w.Process.Pid, syscall.SIGKILL)
		_ = w.Wait()
	})

	var cliOut bytes.Buffer
	cli := func(args ...string) []byte {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Dir = dir
		cmd.Env = env
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		cliOut.Write(out.Bytes())
		cliOut.Write(errb.Bytes())
		if err != nil {
			t.Fatalf("benchline %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errb.String())
		}
		return out.Bytes()
	}

	var run struct {
		RunID string `json:"run_id"`
	}
	out := cli("eval", "--dataset", bfcl.Name, "--model", "sentinel/m", "--limit", "3", "--seed", "3701", "--json")
	if err := json.Unmarshal(out, &run); err != nil || run.RunID == "" {
		t.Fatalf("eval printed %q: %v", out, err)
	}
	cli("eval", "--dataset", bfcl.Name, "--model", "baseline/reference", "--limit", "3", "--seed", "3702", "--batch", "--json")
	// A board of its own each time: a refresh of an unchanged board
	// delivers no webhook (go test -count=2 on one stack).
	board := writeBoard(t, fmt.Sprintf("name: it-sentinel-%d\n", time.Now().UnixNano()%1_000_000_000)+"benchmarks: [{dataset: bfcl}]\nmodels: [sentinel/m]\n"+
		"settings: {seed: 3703, limit: 3}\nwebhook: {url_env: IT_SENTINEL_HOOK_URL, secret_env: IT_SENTINEL_HOOK_SECRET}\n")
	cli("leaderboard", "refresh", board, "--json")
	release := filepath.Join(dir, "release")
	cli("runs", "publish", run.RunID, "--to", filepath.Join(release, "run"), "--json")
	cli("dataset", "publish", bfcl.Name, "--to", filepath.Join(release, "dataset"), "--json")

	mu.Lock()
	if badAuth != 0 || hookCalls != 1 || signed != 1 {
		t.Errorf("the provider refused %d calls for their key; the hook got %d calls with its token, %d signed: want 0, 1, 1", badAuth, hookCalls, signed)
	}
	mu.Unlock()

	// Every workflow of the queue: its history, payloads decoded.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var history strings.Builder
	var token []byte
	workflows := 0
	for {
		resp, err := stack.Client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: "TaskQueue = '" + queue + "'", NextPageToken: token})
		if err != nil {
			t.Fatal(err)
		}
		for _, ex := range resp.Executions {
			workflows++
			iter := stack.Client.GetWorkflowHistory(ctx, ex.Execution.WorkflowId, ex.Execution.RunId, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
			for iter.HasNext() {
				ev, err := iter.Next()
				if err != nil {
					t.Fatal(err)
				}
				b, _ := protojson.Marshal(ev)
				history.Write(b)
			}
		}
		if token = resp.NextPageToken; len(token) == 0 {
			break
		}
	}
	if workflows < 3 {
		t.Errorf("%d workflows on queue %s, want the evals' and the refresh's", workflows, queue)
	}

	// Every object of the bucket.
	var stored strings.Builder
	infos, err := stack.Store.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range infos {
		if in.Size > 16<<20 {
			continue
		}
		b, err := blob.GetBytes(ctx, stack.Store, in.Key)
		if err != nil {
			t.Fatal(err)
		}
		stored.WriteString(in.Key + "\n")
		stored.Write(b)
	}

	// The release folder.
	var released strings.Builder
	files := 0
	if err := filepath.WalkDir(release, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		files++
		released.WriteString(p + "\n")
		released.Write(b)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if files == 0 {
		t.Error("the release folder is empty")
	}

	for name, text := range map[string]string{"the CLI's output": cliOut.String(), "the worker's log": workerLog.String(),
		"the histories": decodedPayloads(t, history.String()), "the bucket": stored.String(), "the release folder": released.String()} {
		for _, s := range sentinels {
			for _, form := range sentinelForms(s) {
				if i := strings.Index(text, form); i >= 0 {
					t.Errorf("%s holds sentinel %s as %q: ...%s...", name, s, form, excerpt(text[max(0, i-200):], 400))
					break
				}
			}
		}
	}
}
