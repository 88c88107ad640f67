// Package devstack runs benchline's embedded stack on loopback: a Temporal
// dev server (SQLite file), an S3-protocol server with a bucket, and the
// processes' lifecycle; StartStack adds the baseline model server and
// in-process workers wired by internal/app, and RunDemo is `benchline
// demo`. `benchline dev`, `benchline demo` and the integration tests all
// use it, so they exercise the production code paths against real servers.
package devstack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/benchline/benchline/internal/blob/s3blob"
	"github.com/benchline/benchline/internal/config"
	"github.com/benchline/benchline/internal/secret"
)

// S3Server names an S3-protocol server the stack can run.
type S3Server string

const (
	// MinIO is the default: file-backed (state survives restarts), with the
	// conditional writes and multipart semantics of AWS S3.
	MinIO S3Server = "minio"
	// Moto is moto_server (in memory; present in the machine image).
	Moto S3Server = "moto"
)

// Options configure a stack. Zero ports pick free ones.
type Options struct {
	Dir          string // state directory (SQLite file, MinIO data); required
	TemporalPort int
	UIPort       int // Temporal Web UI; ignored when Headless
	S3Port       int
	S3           S3Server // [minio]
	Bucket       string   // [benchline]
	Headless     bool     // no Temporal UI
	S3Only       bool     // start only the S3 server (backend conformance tests)
	Log          io.Writer
	// Base is what the stack's Config starts from: its task queue,
	// namespace (created at start) and model settings (providers file,
	// worker share, cache TTL) are kept; its Temporal address and S3
	// settings become the stack's. [config.Default()]
	Base *config.Config
	// Restarts is how many times a server that dies on its own (not by
	// Stop or a Restart method) is restarted within RestartWindow before
	// the stack gives up; 0 restarts none. Either way a death that is not
	// restarted is reported on Died.
	Restarts int
	// RestartWindow is the period Restarts counts over [10m].
	RestartWindow time.Duration
	// Notify receives one line for each death and restart of a server;
	// default none.
	Notify func(msg string)

	// freePort picks a port for each port not given [FreePort]; tests
	// replace it.
	freePort func() (int, error)
}

// Stack is a running embedded stack.
type Stack struct {
	Config     config.Config
	TemporalUI string // empty when headless
	opts       Options

	// ctx ends when Stop begins, aborting a restart in progress.
	ctx          context.Context
	cancel       context.CancelFunc
	mu           sync.Mutex // guards the children and closed; held while restarting
	closed       bool
	temporal, s3 child
	died         chan error
}

// A child is one server of the stack: how to start it (and wait until it
// answers), the running process, and when it was restarted.
type child struct {
	name     string
	launch   func(ctx context.Context) (*Proc, error) // may return the Proc with an error
	proc     *Proc
	restarts []time.Time
	// auto are the stack's ports of this server that were picked (a zero
	// in Options): Start may pick them again if one was taken. Clients
	// know them afterwards, so a restart keeps them.
	auto []*int
	// launchPorts are the ports the last launch picked for itself (a
	// server's HTTP API and metrics): every launch picks anew.
	launchPorts []int
}

// portAttempts bounds how many times a server is launched when a port it
// was given turned out taken by the time it bound it (another process
// took it after it was picked).
const portAttempts = 5

// How long Start may take to bring up both servers (each launch included),
// and a restart one server. They only keep a server that never answers
// from hanging its caller: a Temporal dev server on a loaded 2-core
// machine can take a minute to answer.
const (
	startBound   = 5 * time.Minute
	restartBound = 3 * time.Minute
)

// Start starts Temporal and the S3 server, waits until each answers and
// creates the bucket. Stop it with Stop.
func Start(ctx context.Context, o Options) (*Stack, error) {
	if o.Dir == "" {
		return nil, fmt.Errorf("devstack: Options.Dir is required")
	}
	if o.S3 == "" {
		o.S3 = MinIO
	}
	if o.Bucket == "" {
		o.Bucket = "benchline"
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.RestartWindow <= 0 {
		o.RestartWindow = 10 * time.Minute
	}
	if o.freePort == nil {
		o.freePort = FreePort
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("devstack: %w", err)
	}
	s := &Stack{opts: o, died: make(chan error, 1)}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.s3 = child{name: string(o.S3), launch: s.launchS3}
	s.temporal = child{name: "temporal", launch: s.launchTemporal}
	for _, a := range []struct {
		c    *child
		port *int
	}{{&s.s3, &s.opts.S3Port}, {&s.temporal, &s.opts.TemporalPort}, {&s.temporal, &s.opts.UIPort}} {
		if *a.port != 0 || a.port == &s.opts.UIPort && o.Headless {
			continue
		}
		port, err := o.freePort()
		if err != nil {
			return nil, err
		}
		*a.port = port
		a.c.auto = append(a.c.auto, a.port)
	}
	s.Config = StackConfig(o.Base, s.opts.TemporalPort, s.opts.S3Port, o.Bucket)
	if err := s.Config.Validate(); err != nil {
		return nil, fmt.Errorf("devstack: %w", err)
	}

	ctx, cancel := context.WithTimeout(ctx, startBound)
	defer cancel()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.startChild(ctx, &s.s3, true); err != nil {
		s.stopLocked()
		return nil, err
	}
	if o.S3Only {
		return s, nil
	}
	if err := s.startChild(ctx, &s.temporal, true); err != nil {
		s.stopLocked()
		return nil, err
	}
	return s, nil
}

// StackConfig is the configuration of a stack on these ports: base (nil:
// config.Default()) with the stack's Temporal address and its S3 server,
// bucket and credentials.
func StackConfig(base *config.Config, temporalPort, s3Port int, bucket string) config.Config {
	cfg := config.Default()
	if base != nil {
		cfg = *base
	}
	cfg.Temporal.Address = hostPort(temporalPort)
	cfg.Temporal.APIKey = secret.Value{}
	cfg.Temporal.TLS = config.TemporalTLS{}
	def := config.Default()
	cfg.S3 = def.S3
	cfg.S3.Endpoint = "http://" + hostPort(s3Port)
	cfg.S3.Bucket = bucket
	return cfg
}

// Died receives an error when a server of the stack died and is not being
// restarted (restarts exhausted, or the restart failed). The stack is then
// incomplete; stop it.
func (s *Stack) Died() <-chan error { return s.died }

// startChild launches c, waits until it answers, and watches it. A launch
// that failed because a port was taken by the time the server bound it is
// tried again, at most portAttempts times in all, on new ports: those the
// server picks at each launch, and, at the stack's first start, the
// stack's own ports that were picked (c.auto). A taken port that was given
// (or that clients already know) ends it at once. Callers hold s.mu.
func (s *Stack) startChild(ctx context.Context, c *child, first bool) error {
	for attempt := 1; ; attempt++ {
		p, err := c.launch(ctx)
		if err == nil {
			c.proc = p
			go s.watch(c, p)
			return nil
		}
		if p == nil {
			return err
		}
		p.Stop(10 * time.Second)
		taken, inUse := portsInUse(p.Output())
		if !inUse || attempt == portAttempts || ctx.Err() != nil {
			return err
		}
		again, perr := s.repick(c, taken, first)
		if perr != nil {
			return errors.Join(err, perr)
		}
		if !again {
			return err
		}
		s.logf("devstack: %s could not bind a port (%s); starting it again on other ports (attempt %d of %d)\n",
			c.name, describePorts(taken), attempt+1, portAttempts)
	}
}

// repick picks new ports for a launch of c after taken (the ports its
// output named; none when it did not say which) were found in use, and
// reports whether launching again can help.
func (s *Stack) repick(c *child, taken []int, first bool) (bool, error) {
	var again []*int // stack ports to pick anew
	for _, port := range taken {
		if slices.Contains(c.launchPorts, port) {
			continue // the next launch picks another one itself
		}
		i := slices.IndexFunc(c.auto, func(p *int) bool { return *p == port })
		if i < 0 || !first {
			return false, nil // a port the stack must keep
		}
		again = append(again, c.auto[i])
	}
	if len(taken) == 0 {
		if first {
			again = c.auto
		}
		if len(again) == 0 && len(c.launchPorts) == 0 {
			return false, nil
		}
	}
	for _, p := range again {
		port, err := s.opts.freePort()
		if err != nil {
			return false, err
		}
		*p = port
	}
	if len(again) > 0 {
		s.Config = StackConfig(s.opts.Base, s.opts.TemporalPort, s.opts.S3Port, s.opts.Bucket)
	}
	return true, nil
}

// bindFailure matches what a server prints when a port it should listen on
// is taken: Go's net errors (Temporal, MinIO's listeners) and MinIO's own
// check.
var (
	bindFailure = regexp.MustCompile(`(?i)address already in use|port is already in use`)
	bindPort    = regexp.MustCompile(`:(\d{1,5}): bind: address already in use`)
)

// portsInUse reports whether a server's output says that a port was
// taken, and which ports it names.
func portsInUse(out string) (ports []int, inUse bool) {
	if !bindFailure.MatchString(out) {
		return nil, false
	}
	for _, m := range bindPort.FindAllStringSubmatch(out, -1) {
		if p, err := strconv.Atoi(m[1]); err == nil && !slices.Contains(ports, p) {
			ports = append(ports, p)
		}
	}
	return ports, true
}

func describePorts(ports []int) string {
	if len(ports) == 0 {
		return "which one it did not say"
	}
	return fmt.Sprintf("port %v taken", strings.Trim(fmt.Sprint(ports), "[]"))
}

// watch waits for p to end. An end nobody asked for restarts c, within
// the restart budget, or is reported on Died.
func (s *Stack) watch(c *child, p *Proc) {
	<-p.Done()
	if p.stopped.Load() {
		return // Stop, Kill or a Restart method
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || c.proc != p {
		return
	}
	why := p.ExitReason()
	now := time.Now()
	recent := c.restarts[:0]
	for _, t := range c.restarts {
		if now.Sub(t) < s.opts.RestartWindow {
			recent = append(recent, t)
		}
	}
	c.restarts = recent
	if len(c.restarts) >= s.opts.Restarts {
		s.report(fmt.Errorf("devstack: %s died (%s), restarted %d times in %s already: not restarting it",
			c.name, why, len(c.restarts), s.opts.RestartWindow))
		return
	}
	c.restarts = append(c.restarts, now)
	s.notify(fmt.Sprintf("devstack: %s died (%s); restarting it (%d of %d in %s)", c.name, why, len(c.restarts), s.opts.Restarts, s.opts.RestartWindow))
	// Back off a little, more on each restart, so a server that dies at
	// once does not spin.
	select {
	case <-time.After(time.Duration(len(c.restarts)) * 500 * time.Millisecond):
	case <-s.ctx.Done():
		return
	}
	ctx, cancel := context.WithTimeout(s.ctx, restartBound)
	defer cancel()
	if err := s.startChild(ctx, c, false); err != nil {
		if s.ctx.Err() == nil {
			s.report(fmt.Errorf("devstack: %s died (%s) and did not restart: %w", c.name, why, err))
		}
		return
	}
	s.notify(fmt.Sprintf("devstack: %s is back", c.name))
}

func (s *Stack) logf(format string, args ...any) {
	if s.opts.Log != nil {
		fmt.Fprintf(s.opts.Log, format, args...)
	}
}

func (s *Stack) notify(msg string) {
	if s.opts.Notify != nil {
		s.opts.Notify(msg)
	}
}

// report sends a death on Died; the first one is kept.
func (s *Stack) report(err error) {
	s.notify(err.Error())
	select {
	case s.died <- err:
	default:
	}
}

// temporalSQLitePragmas are the dev server's SQLite settings. SQLite's
// default (a rollback journal, synchronous=FULL) fsyncs the file at every
// commit, and Temporal commits at every activity start and completion and
// every workflow task: a profile of a fast evaluation run found fsync and
// the journal's commit in a quarter of the server's CPU and on the path of
// every shard's round trip. A write-ahead log with synchronous=NORMAL
// syncs only at checkpoints; a commit still survives the process being
// killed, and only an operating-system crash or power loss can lose the
// last commits of this development stack (docs/PERFORMANCE.md
// "Evaluation runs").
var temporalSQLitePragmas = []string{"journal_mode=wal", "synchronous=normal"}

func (s *Stack) launchTemporal(ctx context.Context) (*Proc, error) {
	bin, err := FindTool("temporal")
	if err != nil {
		return nil, err
	}
	metrics, err := s.opts.freePort()
	if err != nil {
		return nil, err
	}
	httpPort, err := s.opts.freePort()
	if err != nil {
		return nil, err
	}
	s.temporal.launchPorts = []int{httpPort, metrics}
	args := []string{"server", "start-dev", "--ip", "127.0.0.1", "--port", fmt.Sprint(s.opts.TemporalPort),
		"--http-port", fmt.Sprint(httpPort), "--metrics-port", fmt.Sprint(metrics),
		"--db-filename", filepath.Join(s.opts.Dir, "temporal.db"), "--log-level", "warn"}
	for _, p := range temporalSQLitePragmas {
		args = append(args, "--sqlite-pragma", p)
	}
	if ns := s.Config.Temporal.Namespace; ns != "default" {
		args = append(args, "--namespace", ns)
	}
	if s.opts.Headless {
		args = append(args, "--headless")
	} else {
		args = append(args, "--ui-port", fmt.Sprint(s.opts.UIPort))
		s.TemporalUI = "http://" + hostPort(s.opts.UIPort)
	}
	p, err := startProc("temporal", s.opts.Log, os.Environ(), bin, args...)
	if err != nil {
		return nil, err
	}
	for {
		c, err := client.Dial(client.Options{HostPort: s.Config.Temporal.Address, Namespace: s.Config.Temporal.Namespace, Logger: quietLogger{}})
		if err == nil {
			_, herr := c.CheckHealth(ctx, &client.CheckHealthRequest{})
			c.Close()
			// A server that answers while ours has exited is another
			// process's, on a port ours could not bind.
			if herr == nil && !p.Exited() {
				return p, nil
			}
		}
		if p.Exited() {
			port := s.opts.TemporalPort
			if taken, _ := portsInUse(p.Output()); len(taken) > 0 {
				port = taken[0] // the port it named: maybe its HTTP API's
			}
			return p, fmt.Errorf("devstack: temporal server exited at start (is port %d free?): %s", port, p.ExitReason())
		}
		select {
		case <-ctx.Done():
			return p, fmt.Errorf("devstack: temporal server did not answer on %s: %w", s.Config.Temporal.Address, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (s *Stack) launchS3(ctx context.Context) (*Proc, error) {
	var (
		p   *Proc
		err error
		url string
	)
	addr := hostPort(s.opts.S3Port)
	switch s.opts.S3 {
	case MinIO:
		bin, ferr := FindTool("minio")
		if ferr != nil {
			return nil, ferr
		}
		cport, perr := s.opts.freePort()
		if perr != nil {
			return nil, perr
		}
		// The console is off (MINIO_BROWSER=off): MinIO does not bind
		// cport, so it is not one of the ports a launch can fail on.
		env := append(os.Environ(), "MINIO_ROOT_USER="+config.DevAccessKey, "MINIO_ROOT_PASSWORD="+config.DevSecretKey,
			"MINIO_BROWSER=off", "MINIO_UPDATE=off", "MINIO_CI_CD=1")
		p, err = startProc("minio", s.opts.Log, env, bin, "server", filepath.Join(s.opts.Dir, "s3"),
			"--address", addr, "--console-address", hostPort(cport), "--quiet")
		url = "http://" + addr + "/minio/health/ready"
	case Moto:
		bin, ferr := FindTool("moto_server")
		if ferr != nil {
			return nil, ferr
		}
		p, err = startProc("moto", s.opts.Log, os.Environ(), bin, "-H", "127.0.0.1", "-p", fmt.Sprint(s.opts.S3Port))
		url = "http://" + addr + "/moto-api/"
	default:
		return nil, fmt.Errorf("devstack: unknown S3 server %q (minio or moto)", s.opts.S3)
	}
	if err != nil {
		return nil, err
	}
	if err := waitHTTP(ctx, p, url); err != nil {
		return p, err
	}
	st, err := s3blob.New(ctx, s.Config.S3)
	if err != nil {
		return p, err
	}
	return p, st.EnsureBucket(ctx)
}

// RestartS3 stops the S3 server and starts it again on the same port and
// data directory (MinIO keeps its data; moto does not).
func (s *Stack) RestartS3(ctx context.Context) error { return s.restart(ctx, &s.s3) }

// RestartTemporal stops the Temporal server and starts it again on the same
// port and SQLite file.
func (s *Stack) RestartTemporal(ctx context.Context) error { return s.restart(ctx, &s.temporal) }

func (s *Stack) restart(ctx context.Context, c *child) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("devstack: restart %s: the stack is stopped", c.name)
	}
	if c.proc != nil {
		c.proc.Stop(10 * time.Second)
	}
	ctx, cancel := context.WithTimeout(ctx, restartBound)
	defer cancel()
	return s.startChild(ctx, c, false)
}

// Stop stops every process of the stack, and any restart in progress.
func (s *Stack) Stop() {
	s.cancel()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopLocked()
}

func (s *Stack) stopLocked() {
	s.closed = true
	s.cancel()
	for _, c := range []*child{&s.temporal, &s.s3} {
		if c.proc != nil {
			c.proc.Stop(10 * time.Second)
		}
	}
}

// quietLogger drops the SDK's logs during start-up polling.
type quietLogger struct{}

func (quietLogger) Debug(string, ...interface{}) {}
func (quietLogger) Info(string, ...interface{})  {}
func (quietLogger) Warn(string, ...interface{})  {}
func (quietLogger) Error(string, ...interface{}) {}
