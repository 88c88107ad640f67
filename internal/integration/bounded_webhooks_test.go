package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/bfcl"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/wfclient"
)

// countingServer counts the requests an httptest server gets.
type countingServer struct {
	mu    sync.Mutex
	calls int
	then  http.HandlerFunc
}

func (c *countingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	c.calls++
	c.mu.Unlock()
	c.then(w, r)
}

func (c *countingServer) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls
}

// TestLeaderboardWebhookBounded: a board's webhook whose URL carries a
// token (in the worker's environment, url_env) answers 307 to a second
// server, standing for the metadata service or the stack's MinIO. The
// delivery fails with its status and the URL's scheme, host and path; the
// second server gets nothing; the token is in none of the CLI's output,
// the worker's log, the workflow's history or the stamp's objects. A
// board file with the token in its url is refused without showing it.
func TestLeaderboardWebhookBounded(t *testing.T) {
	const sentinel = "SENTINEL4tok"
	bin := buildBinary(t)
	if _, err := buildVia(t, bfcl.Name, datasets.Request{Source: bfcl.Embedded}); err != nil {
		t.Fatal(err)
	}
	elsewhere := &countingServer{then: func(http.ResponseWriter, *http.Request) {}}
	other := httptest.NewServer(elsewhere)
	defer other.Close()
	hook := &countingServer{then: func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/latest/meta-data/iam", http.StatusTemporaryRedirect)
	}}
	srv := httptest.NewServer(hook)
	defer srv.Close()

	// A worker of its own, on its own queue, whose log the test reads.
	const queue = "it-webhooks"
	env := workerEnv(queue, stack.BaselineURL, "IT_HOOK_URL="+srv.URL+"/hook?token="+sentinel+"#"+sentinel)
	var workerLog lockedBuffer
	startProcWorkerLog(t, bin, env, &workerLog, "worker", "--queues", "main")
	cli := func(args ...string) (string, string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append([]string{"leaderboard"}, args...)...)
		cmd.Env = env
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		return out.String(), errb.String(), err
	}

	path := writeBoard(t, "name: it-webhook\nbenchmarks: [{dataset: bfcl}]\nmodels: [baseline/reference]\n"+
		"settings: {seed: 9131, limit: 3}\nwebhook: {url_env: IT_HOOK_URL}\n")
	out, errs, err := cli("refresh", path, "--json")
	if err != nil {
		t.Fatalf("refresh: %v\n%s%s", err, out, errs)
	}
	var rep struct {
		Stamp   string `json:"stamp"`
		Webhook string `json:"webhook"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("refresh printed %q: %v", out, err)
	}
	if hook.count() != 1 || elsewhere.count() != 0 {
		t.Errorf("the hook got %d requests, the server it redirects to %d: want 1 and 0", hook.count(), elsewhere.count())
	}
	for _, want := range []string{"not delivered after 1 attempts", srv.URL + "/hook: 307", "redirects are not followed"} {
		if !strings.Contains(rep.Webhook, want) {
			t.Errorf("webhook %q does not say %q", rep.Webhook, want)
		}
	}
	deadline := time.Now().Add(time.Minute) // the log is written before the activity returns; a deadline, not a timing
	for !strings.Contains(workerLog.String(), "webhook not delivered") && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if log := workerLog.String(); !strings.Contains(log, "webhook not delivered") || !strings.Contains(log, srv.URL+"/hook") {
		t.Errorf("the worker's log does not report the delivery to %s/hook:\n%s", srv.URL, log)
	}

	// The history: the board (url_env only), the activity's result, the
	// workflow's result.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var history strings.Builder
	iter := stack.Client.GetWorkflowHistory(ctx, wfclient.RefreshWorkflowID("it-webhook"), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := protojson.Marshal(ev)
		history.Write(b) // payloads are base64: the search below decodes them
	}
	if !strings.Contains(history.String(), "WorkflowExecutionCompleted") {
		t.Fatalf("history of the refresh has no completion:\n%.2000s", history.String())
	}
	stored := ""
	infos, err := stack.Store.List(ctx, "leaderboards/it-webhook/"+rep.Stamp+"/")
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range infos {
		if in.Size > 4<<20 {
			continue
		}
		b, err := blob.GetBytes(ctx, stack.Store, in.Key)
		if err != nil {
			t.Fatal(err)
		}
		stored += in.Key + "\n" + string(b) + "\n"
	}
	if !strings.Contains(stored, "changes.json") {
		t.Fatalf("stamp %s has no changes.json: %s", rep.Stamp, stored)
	}
	for name, text := range map[string]string{"stdout": out, "stderr": errs, "the worker's log": workerLog.String(),
		"the history": decodedPayloads(t, history.String()), "the stamp's objects": stored} {
		if strings.Contains(text, sentinel) {
			t.Errorf("%s shows the webhook's token:\n%s", name, text)
		}
	}

	// A token in the board file is refused before anything starts, and
	// the message does not repeat it.
	bad := writeBoard(t, "name: it-webhook\nbenchmarks: [{dataset: bfcl}]\nmodels: [baseline/reference]\n"+
		"settings: {seed: 9131, limit: 3}\nwebhook: {url: '"+srv.URL+"/hook?token="+sentinel+"'}\n")
	out, errs, err = cli("refresh", bad, "--json")
	if err == nil || !strings.Contains(errs, "url_env") || !strings.Contains(errs, bad) || strings.Contains(out+errs, sentinel) {
		t.Errorf("a token in the board file: err %v, stdout %q, stderr %q; want a refusal naming the file and url_env, without the token", err, out, errs)
	}
	if hook.count() != 1 {
		t.Errorf("the hook got %d requests after the refused board, want 1", hook.count())
	}
}

// decodedPayloads is text with every base64 "data" field of a protojson
// history also written decoded, so that a search finds what payloads hold.
func decodedPayloads(t *testing.T, text string) string {
	t.Helper()
	var sb strings.Builder
	sb.WriteString(text)
	// protojson writes "data":"..." and the temporal CLI "data": "..."
	for _, m := range payloadData.FindAllStringSubmatch(text, -1) {
		var b []byte
		if err := json.Unmarshal([]byte(`"`+m[1]+`"`), &b); err == nil {
			sb.WriteString("\n")
			sb.Write(b)
		}
	}
	return sb.String()
}

// payloadData matches a payload's base64 data in a history as JSON.
var payloadData = regexp.MustCompile(`"data":\s*"([^"]*)"`)
