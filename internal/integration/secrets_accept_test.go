package integration

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/benchline/benchline/datasets/bfcl"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/s3blob"
	"github.com/benchline/benchline/internal/childproc"
	"github.com/benchline/benchline/internal/devstack"
	"github.com/benchline/benchline/internal/secret"
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
// secret (secret_env), S3 credentials and a Temporal API key
// (TEMPORAL_API_KEY, sent over TLS through a proxy in front of the dev
// server) build a dataset, run a full eval, a batch eval, a board refresh
// that delivers its webhook, runs publish and dataset publish; then
// `leaderboard serve`, with a sentinel OIDC client secret and session
// cookie key, serves the board to a person who logs in. The bucket is on
// a MinIO of the test's own whose root secret key is a sentinel: the
// worker has it as s3.secret_access_key in its configuration file; the CLI
// and serve have a temporary credential of that MinIO scoped to the bucket
// (its secret key and session token, in AWS_SECRET_ACCESS_KEY and
// AWS_SESSION_TOKEN, for the AWS credential chain). The provider checks
// that it gets the key, the receiver that it gets the token and a
// signature, the proxy that every request to Temporal carries the API key,
// the OIDC provider the client secret (the login fails without it); then
// no sentinel, URL-escaped or base64, is in the CLI's output, the worker's
// or serve's log, any workflow history of the worker's queue (payloads
// decoded), any object in the bucket, the release folder, or any answer of
// the site (status, headers, cookies, body).
func TestSecretsNeverLeak(t *testing.T) {
	const (
		modelKey    = "SENTINELmodelKey7q"
		hookToken   = "SENTINELhookTok9w"
		hookSecret  = "SENTINELhookSec3e"
		temporalKey = "SENTINELtemporalKey5r"
		oidcSecret  = "SENTINELoidcSecret4k"
		sessionKey  = "SENTINELsessionKey6p-at-least-32-bytes"
		// the own MinIO's root key: the worker's; the CLI's temporary
		// secret key and token are MinIO's
		s3User, s3RootKey = "itsentinel", "SENTINELs3RootKey2u"
		queue             = "it-sentinel"
	)
	bucket := startSentinelMinIO(t, s3User, s3RootKey)
	s3Access, s3Secret, s3Token := scopedS3Credential(t, bucket.Config, s3User, s3RootKey)
	sentinels := []struct{ name, value string }{{"the model key", modelKey}, {"the webhook URL token", hookToken},
		{"the webhook secret", hookSecret}, {"the S3 root secret key", s3RootKey}, {"the S3 temporary secret key", s3Secret},
		{"the S3 session token", s3Token}, {"the Temporal API key", temporalKey},
		{"the OIDC client secret", oidcSecret}, {"the session cookie key", sessionKey}}
	proxy := startTemporalTLSProxy(t, stack.Stack.Config.Temporal.Address)
	bin := buildBinary(t)

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
	// The worker's S3 settings are in its configuration file (the
	// variables that would win over it are emptied); the CLI's are in the
	// environment.
	workerConfig := filepath.Join(dir, "benchline.yaml")
	if err := os.WriteFile(workerConfig, []byte(fmt.Sprintf("s3:\n  endpoint: %s\n  bucket: %s\n  path_style: true\n"+
		"  access_key_id: %s\n  secret_access_key: %s\n", bucket.Config.Endpoint, bucket.Config.Bucket, s3User, s3RootKey)), 0o600); err != nil {
		t.Fatal(err)
	}
	common := []string{"BENCHLINE_PROVIDERS=" + providers,
		"IT_SENTINEL_MODEL_KEY=" + modelKey, "IT_SENTINEL_HOOK_URL=" + hook.URL + "/hook?token=" + hookToken,
		"IT_SENTINEL_HOOK_SECRET=" + hookSecret,
		"TEMPORAL_ADDRESS=" + proxy.Addr, "TEMPORAL_API_KEY=" + temporalKey, "TEMPORAL_TLS_CA=" + proxy.CAFile}
	workerEnvs := workerEnv(queue, stack.BaselineURL, slices.Concat(common, []string{"BENCHLINE_CONFIG=" + workerConfig,
		"BENCHLINE_S3_ENDPOINT=", "BENCHLINE_S3_BUCKET=", "AWS_ACCESS_KEY_ID=", "AWS_SECRET_ACCESS_KEY=", "AWS_SESSION_TOKEN="})...)
	env := workerEnv(queue, stack.BaselineURL, slices.Concat(common, []string{
		"BENCHLINE_S3_ENDPOINT=" + bucket.Config.Endpoint, "BENCHLINE_S3_BUCKET=" + bucket.Config.Bucket,
		"AWS_ACCESS_KEY_ID=" + s3Access, "AWS_SECRET_ACCESS_KEY=" + s3Secret, "AWS_SESSION_TOKEN=" + s3Token})...)

	var workerLog lockedBuffer
	startProcWorkerLog(t, bin, workerEnvs, &workerLog, "worker", "--queues", "main")

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
	cli("dataset", "build", bfcl.Name)
	out := cli("eval", "--dataset", bfcl.Name, "--model", "sentinel/m", "--limit", "3", "--seed", "3701", "--json")
	if err := json.Unmarshal(out, &run); err != nil || run.RunID == "" {
		t.Fatalf("eval printed %q: %v", out, err)
	}
	cli("eval", "--dataset", bfcl.Name, "--model", "baseline/reference", "--limit", "3", "--seed", "3702", "--batch", "--json")
	// A board of its own each time: a refresh of an unchanged board
	// delivers no webhook (go test -count=2 on one stack).
	boardName := fmt.Sprintf("it-sentinel-%d", time.Now().UnixNano()%1_000_000_000)
	board := writeBoard(t, "name: "+boardName+"\nbenchmarks: [{dataset: bfcl}]\nmodels: [sentinel/m]\n"+
		"settings: {seed: 3703, limit: 3}\nwebhook: {url_env: IT_SENTINEL_HOOK_URL, secret_env: IT_SENTINEL_HOOK_SECRET}\n"+
		"access: {groups: [it-sentinel-readers]}\n")
	cli("leaderboard", "refresh", board, "--json")
	release := filepath.Join(dir, "release")
	cli("runs", "publish", run.RunID, "--to", filepath.Join(release, "run"), "--json")
	cli("dataset", "publish", bfcl.Name, "--to", filepath.Join(release, "dataset"), "--json")

	mu.Lock()
	if badAuth != 0 || hookCalls != 1 || signed != 1 {
		t.Errorf("the provider refused %d calls for their key; the hook got %d calls with its token, %d signed: want 0, 1, 1", badAuth, hookCalls, signed)
	}
	mu.Unlock()

	// The site: `leaderboard serve` with OpenID Connect login through a
	// real provider (zitadel/oidc's example OP, in this process, which
	// checks the client secret), a person logging in and reading the
	// board's pages and scores.
	serveLog, site := serveAndReadBoard(t, bin, env, board, boardName, oidcSecret, sessionKey)

	if with, without := proxy.requests("Bearer " + temporalKey); with == 0 || without != 0 {
		t.Errorf("Temporal got %d requests through the TLS proxy with the API key and %d without: want some, and 0", with, without)
	}

	// Every workflow of the queue: its history, payloads decoded, and what
	// the temporal CLI's `workflow show` prints of it (as an operator
	// would look at it).
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	temporalBin, err := devstack.FindTool("temporal")
	if err != nil {
		t.Fatal(err)
	}
	var history, shown strings.Builder
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
			show := exec.CommandContext(ctx, temporalBin, "workflow", "show", "--workflow-id", ex.Execution.WorkflowId,
				"--run-id", ex.Execution.RunId, "--address", stack.Stack.Config.Temporal.Address,
				"--namespace", stack.Stack.Config.Temporal.Namespace, "--output", "json")
			out, err := show.CombinedOutput()
			if err != nil {
				t.Fatalf("temporal workflow show %s: %v\n%s", ex.Execution.WorkflowId, err, out)
			}
			shown.Write(out)
		}
		if token = resp.NextPageToken; len(token) == 0 {
			break
		}
	}
	// what the search reads of it: the events and their payloads decoded
	// (a workflow's input names the model only inside a payload)
	showText := decodedPayloads(t, shown.String())
	if !strings.Contains(showText, queue) || !strings.Contains(showText, `"model":"sentinel/m"`) {
		t.Errorf("temporal workflow show printed no history of queue %s with its payloads:\n%s", queue, excerpt(shown.String(), 400))
	}
	if workflows < 3 {
		t.Errorf("%d workflows on queue %s, want the evals' and the refresh's", workflows, queue)
	}

	// Every object of the bucket.
	var stored strings.Builder
	infos, err := bucket.Store.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range infos {
		if in.Size > 16<<20 {
			continue
		}
		b, err := blob.GetBytes(ctx, bucket.Store, in.Key)
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
		"leaderboard serve's log": serveLog.String(), "the site": site,
		"the histories": decodedPayloads(t, history.String()), "temporal workflow show": showText, "the bucket": stored.String(), "the release folder": released.String()} {
		for _, s := range sentinels {
			for _, form := range sentinelForms(s.value) {
				if i := strings.Index(text, form); i >= 0 {
					t.Errorf("%s holds %s as %q: ...%s...", name, s.name, excerpt(form, 60), excerpt(text[max(0, i-200):], 400))
					break
				}
			}
		}
	}
}

// A sentinelBucket is the bucket of a MinIO of a test's own: its
// settings (with the root credential) and a store on it.
type sentinelBucket struct {
	Config s3blob.Config
	Store  *s3blob.Store
}

// startSentinelMinIO starts a MinIO of the test's own on loopback whose
// root credential is user and rootKey, with an empty bucket; it is killed
// when the test ends.
func startSentinelMinIO(t *testing.T, user, rootKey string) sentinelBucket {
	t.Helper()
	bin, err := devstack.FindTool("minio")
	if err != nil {
		t.Fatal(err)
	}
	port, err := devstack.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	cport, err := devstack.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort("127.0.0.1", fmt.Sprint(port))
	var out lockedBuffer
	cmd := exec.Command(bin, "server", t.TempDir(), "--address", addr,
		"--console-address", net.JoinHostPort("127.0.0.1", fmt.Sprint(cport)), "--quiet")
	cmd.Env = append(os.Environ(), "MINIO_ROOT_USER="+user, "MINIO_ROOT_PASSWORD="+rootKey,
		"MINIO_BROWSER=off", "MINIO_UPDATE=off", "MINIO_CI_CD=1")
	cmd.Stdout, cmd.Stderr = &out, &out
	p, err := childproc.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Kill)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/minio/health/ready", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && !p.Exited() {
				break
			}
		}
		if p.Exited() || ctx.Err() != nil {
			t.Fatalf("the test's MinIO on %s did not start: %v\n%s", addr, p.Wait(), out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	cfg := s3blob.Config{Endpoint: "http://" + addr, Bucket: "it-sentinel", Region: "us-east-1", PathStyle: true,
		AccessKeyID: user, SecretAccessKey: secret.New(rootKey)}
	st, err := s3blob.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.EnsureBucket(ctx); err != nil {
		t.Fatal(err)
	}
	return sentinelBucket{Config: cfg, Store: st}
}

// scopedS3Credential asks a MinIO (STS AssumeRole, signed with its root
// credential user and rootKey) for a temporary credential limited to
// cfg's bucket: an access key, a secret key and a session token that
// exist nowhere but in this test and the processes it gives them to.
// MinIO draws the secret key and token at random, so they serve as
// sentinels as they are.
func scopedS3Credential(t *testing.T, cfg s3blob.Config, user, rootKey string) (access, secretKey, token string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client := sts.New(sts.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(cfg.Endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider(user, rootKey, ""),
	})
	policy := fmt.Sprintf(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:*"],`+
		`"Resource":["arn:aws:s3:::%s","arn:aws:s3:::%s/*"]}]}`, cfg.Bucket, cfg.Bucket)
	in := &sts.AssumeRoleInput{
		RoleArn:         aws.String("arn:minio:iam:::role/benchline-it-sentinel"),
		RoleSessionName: aws.String("it-sentinel"),
		Policy:          aws.String(policy),
		DurationSeconds: aws.Int32(4 * 3600), // outlives a slow run of the test
	}
	// A MinIO that just became ready may not have loaded its identities
	// yet: it says so, and is asked again.
	out, err := client.AssumeRole(ctx, in)
	for err != nil && strings.Contains(err.Error(), "Server not initialized") && ctx.Err() == nil {
		time.Sleep(200 * time.Millisecond)
		out, err = client.AssumeRole(ctx, in)
	}
	if err != nil {
		t.Fatalf("MinIO STS AssumeRole: %v", err)
	}
	c := out.Credentials
	if c == nil || aws.ToString(c.SecretAccessKey) == "" || aws.ToString(c.SessionToken) == "" {
		t.Fatalf("MinIO STS AssumeRole gave no credential: %+v", out)
	}
	return aws.ToString(c.AccessKeyId), aws.ToString(c.SecretAccessKey), aws.ToString(c.SessionToken)
}

// A temporalTLSProxy stands in front of the stack's Temporal dev server,
// which speaks plain gRPC: it ends TLS (HTTP/2 by ALPN, as gRPC requires)
// with a certificate for 127.0.0.1 of its own CA, forwards the bytes, and
// reads the headers of every request on the way to note the value of its
// authorization header. A client given an API key turns TLS on (the SDK
// and config.Temporal.ClientTLS both do), so this is how the CLI and a
// worker can send the dev server one: with the proxy's CA as
// temporal.tls_ca_file.
type temporalTLSProxy struct {
	Addr   string // host:port of the TLS listener
	CAFile string // its CA, PEM

	mu   sync.Mutex
	auth map[string]int // authorization value ("" when none) -> requests
}

func startTemporalTLSProxy(t *testing.T, upstream string) *temporalTLSProxy {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(3701), Subject: pkix.Name{CommonName: "benchline it temporal proxy"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	p := &temporalTLSProxy{CAFile: filepath.Join(t.TempDir(), "temporal-ca.pem"), auth: map[string]int{}}
	if err := os.WriteFile(p.CAFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}},
		NextProtos:   []string{"h2"}, MinVersion: tls.VersionTLS12,
	})
	if err != nil {
		t.Fatal(err)
	}
	p.Addr = ln.Addr().String()
	var conns sync.WaitGroup
	t.Cleanup(func() { ln.Close(); conns.Wait() })
	var open sync.Map // live connections, closed at cleanup
	t.Cleanup(func() {
		open.Range(func(c, _ any) bool { c.(net.Conn).Close(); return true })
	})
	go func() {
		for {
			down, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() {
				defer conns.Done()
				p.serve(down, upstream, &open)
			}()
		}
	}()
	return p
}

// serve forwards one client connection to upstream until either side ends.
func (p *temporalTLSProxy) serve(down net.Conn, upstream string, open *sync.Map) {
	defer down.Close()
	up, err := net.DialTimeout("tcp", upstream, 30*time.Second)
	if err != nil {
		return
	}
	defer up.Close()
	open.Store(down, true)
	open.Store(up, true)
	defer open.Delete(down)
	defer open.Delete(up)
	pr, pw := io.Pipe()
	go p.sniff(pr)
	done := make(chan struct{}, 2)
	go func() {
		_, _ = io.Copy(up, io.TeeReader(down, pw))
		pw.Close()
		done <- struct{}{}
	}()
	go func() { _, _ = io.Copy(down, up); done <- struct{}{} }()
	<-done
}

// sniff reads the client's side of an HTTP/2 connection (preface, then
// frames) and counts the authorization header of each request. It drains
// r to the end whatever it meets, so the copy it hangs off never blocks.
func (p *temporalTLSProxy) sniff(r *io.PipeReader) {
	defer func() { _, _ = io.Copy(io.Discard, r) }()
	if _, err := io.ReadFull(r, make([]byte, len(http2.ClientPreface))); err != nil {
		return
	}
	fr := http2.NewFramer(nil, r)
	fr.SetMaxReadFrameSize(1 << 24)
	fr.ReadMetaHeaders = hpack.NewDecoder(64<<10, nil)
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return
		}
		if h, ok := f.(*http2.MetaHeadersFrame); ok && h.PseudoValue("path") != "" {
			var auth string
			for _, hf := range h.RegularFields() {
				if hf.Name == "authorization" {
					auth = hf.Value
				}
			}
			p.mu.Lock()
			p.auth[auth]++
			p.mu.Unlock()
		}
	}
}

// requests reports how many requests carried want as their authorization
// header, and how many carried another value or none.
func (p *temporalTLSProxy) requests(want string) (with, without int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for v, n := range p.auth {
		if v == want {
			with += n
		} else {
			without += n
		}
	}
	return with, without
}

// readerStorage is zitadel's example OP storage whose ID tokens put every
// user in the group it-sentinel-readers.
type readerStorage struct{ *storage.Storage }

func (s readerStorage) SetUserinfoFromRequest(ctx context.Context, ui *oidc.UserInfo, tok op.IDTokenRequest, scopes []string) error {
	if err := s.Storage.SetUserinfoFromRequest(ctx, ui, tok, scopes); err != nil {
		return err
	}
	ui.AppendClaims("groups", []string{"it-sentinel-readers"})
	return nil
}

// serveAndReadBoard runs `leaderboard serve` (env, the board file board)
// with OpenID Connect login: its client secret and session cookie key are
// oidcSecret and sessionKey, its provider zitadel/oidc's example OP in
// this process with that client. A person of the board's group logs in and reads /, the board's page and scores.json. It returns
// serve's log and every answer (status, headers, body) it read; it fails
// the test when the login or a read did not succeed.
func serveAndReadBoard(t *testing.T, bin string, env []string, board, boardName, oidcSecret, sessionKey string) (*lockedBuffer, string) {
	t.Helper()
	port, err := devstack.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	serveURL := "http://" + net.JoinHostPort("127.0.0.1", fmt.Sprint(port))
	opMux := http.NewServeMux()
	opSrv := httptest.NewServer(opMux)
	t.Cleanup(opSrv.Close)
	st := readerStorage{storage.NewStorageWithClients(storage.NewUserStore(opSrv.URL),
		map[string]*storage.Client{"benchline": storage.WebClient("benchline", oidcSecret, serveURL+"/callback")})}
	opMux.Handle("/", exampleop.SetupServer(opSrv.URL, st, slog.New(slog.DiscardHandler), false))

	var out lockedBuffer
	cmd := exec.Command(bin, "leaderboard", "serve", "--addr", strings.TrimPrefix(serveURL, "http://"), "--board", board,
		"--oidc-issuer", opSrv.URL, "--oidc-client-id", "benchline", "--oidc-redirect-url", serveURL+"/callback")
	cmd.Env = slices.Concat(env, []string{"BENCHLINE_OIDC_CLIENT_SECRET=" + oidcSecret, "BENCHLINE_SESSION_KEY=" + sessionKey})
	cmd.Stdout, cmd.Stderr = &out, &out
	p, err := childproc.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Kill)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for !strings.Contains(out.String(), "serving leaderboards on") {
		if p.Exited() || ctx.Err() != nil {
			t.Fatalf("leaderboard serve did not start: %v\n%s", p.Wait(), out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}

	var site strings.Builder
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: time.Minute}
	read := func(resp *http.Response, err error) (*http.Response, string) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&site, "%s %d\n", resp.Request.URL, resp.StatusCode)
		_ = resp.Header.Write(&site)
		site.Write(b)
		return resp, string(b)
	}
	get := func(path string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, serveURL+path, nil)
		req.Header.Set("Accept", "text/html")
		return read(c.Do(req))
	}
	// Logged out: to /login, the provider, and its login page.
	resp, _ := get("/" + boardName + "/")
	id := resp.Request.URL.Query().Get("authRequestID")
	if !strings.HasPrefix(resp.Request.URL.String(), opSrv.URL+"/login/username") || id == "" {
		t.Fatalf("a logged-out browser ends at %s, want the provider's login page", resp.Request.URL)
	}
	host, _ := url.Parse(opSrv.URL)
	resp, body := read(c.PostForm(opSrv.URL+"/login/username", url.Values{"id": {id},
		"username": {"test-user@" + host.Hostname()}, "password": {"verysecure"}}))
	if resp.StatusCode != http.StatusOK || resp.Request.URL.String() != serveURL+"/"+boardName+"/" {
		t.Fatalf("logged in, the browser ends at %s with %d %s, want the board's page; leaderboard serve:\n%s", resp.Request.URL, resp.StatusCode, excerpt(body, 300), out.String())
	}
	for _, path := range []string{"/", "/" + boardName + "/scores.json"} {
		if resp, body := get(path); resp.StatusCode != http.StatusOK || !strings.Contains(body, boardName) {
			t.Errorf("GET %s logged in: %d %s, want 200 naming the board", path, resp.StatusCode, excerpt(body, 300))
		}
	}
	for _, ck := range jar.Cookies(resp.Request.URL) {
		fmt.Fprintf(&site, "cookie %s=%s\n", ck.Name, ck.Value)
	}
	return &out, site.String()
}
