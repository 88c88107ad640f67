// Package devstack runs benchline's embedded stack on loopback: a Temporal
// dev server (SQLite file), an S3-protocol server with a bucket, and the
// processes' lifecycle. `benchline dev`, `benchline demo` and the integration
// tests all use it, so they exercise the production code paths against real
// servers.
package devstack

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/benchline/benchline/internal/blob/s3blob"
	"github.com/benchline/benchline/internal/config"
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
}

// Stack is a running embedded stack.
type Stack struct {
	Config     config.Config
	TemporalUI string // empty when headless
	opts       Options
	temporal   *Proc
	s3         *Proc
}

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
	for _, p := range []*int{&o.TemporalPort, &o.S3Port} {
		if *p == 0 {
			port, err := FreePort()
			if err != nil {
				return nil, err
			}
			*p = port
		}
	}
	if !o.Headless && o.UIPort == 0 {
		port, err := FreePort()
		if err != nil {
			return nil, err
		}
		o.UIPort = port
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("devstack: %w", err)
	}
	s := &Stack{opts: o}
	cfg := config.Default()
	cfg.Temporal.Address = hostPort(o.TemporalPort)
	cfg.S3.Endpoint = "http://" + hostPort(o.S3Port)
	cfg.S3.Bucket = o.Bucket
	s.Config = cfg

	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := s.startS3(ctx); err != nil {
		s.Stop()
		return nil, err
	}
	if o.S3Only {
		return s, nil
	}
	if err := s.startTemporal(ctx); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

func (s *Stack) startTemporal(ctx context.Context) error {
	bin, err := FindTool("temporal")
	if err != nil {
		return err
	}
	metrics, err := FreePort()
	if err != nil {
		return err
	}
	httpPort, err := FreePort()
	if err != nil {
		return err
	}
	args := []string{"server", "start-dev", "--ip", "127.0.0.1", "--port", fmt.Sprint(s.opts.TemporalPort),
		"--http-port", fmt.Sprint(httpPort), "--metrics-port", fmt.Sprint(metrics),
		"--db-filename", filepath.Join(s.opts.Dir, "temporal.db"), "--log-level", "warn"}
	if s.opts.Headless {
		args = append(args, "--headless")
	} else {
		args = append(args, "--ui-port", fmt.Sprint(s.opts.UIPort))
		s.TemporalUI = "http://" + hostPort(s.opts.UIPort)
	}
	p, err := startProc("temporal", s.opts.Log, os.Environ(), bin, args...)
	if err != nil {
		return err
	}
	s.temporal = p
	for {
		c, err := client.Dial(client.Options{HostPort: s.Config.Temporal.Address, Namespace: s.Config.Temporal.Namespace, Logger: quietLogger{}})
		if err == nil {
			_, herr := c.CheckHealth(ctx, &client.CheckHealthRequest{})
			c.Close()
			if herr == nil {
				return nil
			}
		}
		if p.Exited() {
			return fmt.Errorf("devstack: temporal server exited at start (is port %d free?)", s.opts.TemporalPort)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("devstack: temporal server did not answer on %s: %w", s.Config.Temporal.Address, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (s *Stack) startS3(ctx context.Context) error {
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
			return ferr
		}
		cport, perr := FreePort()
		if perr != nil {
			return perr
		}
		env := append(os.Environ(), "MINIO_ROOT_USER="+config.DevAccessKey, "MINIO_ROOT_PASSWORD="+config.DevSecretKey,
			"MINIO_BROWSER=off", "MINIO_UPDATE=off", "MINIO_CI_CD=1")
		p, err = startProc("minio", s.opts.Log, env, bin, "server", filepath.Join(s.opts.Dir, "s3"),
			"--address", addr, "--console-address", hostPort(cport), "--quiet")
		url = "http://" + addr + "/minio/health/ready"
	case Moto:
		bin, ferr := FindTool("moto_server")
		if ferr != nil {
			return ferr
		}
		p, err = startProc("moto", s.opts.Log, os.Environ(), bin, "-H", "127.0.0.1", "-p", fmt.Sprint(s.opts.S3Port))
		url = "http://" + addr + "/moto-api/"
	default:
		return fmt.Errorf("devstack: unknown S3 server %q (minio or moto)", s.opts.S3)
	}
	if err != nil {
		return err
	}
	s.s3 = p
	if err := waitHTTP(ctx, p, url); err != nil {
		return err
	}
	st, err := s3blob.New(ctx, s.Config.S3)
	if err != nil {
		return err
	}
	return st.EnsureBucket(ctx)
}

// RestartS3 stops the S3 server and starts it again on the same port and
// data directory (MinIO keeps its data; moto does not).
func (s *Stack) RestartS3(ctx context.Context) error {
	if s.s3 != nil {
		s.s3.Stop(10 * time.Second)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return s.startS3(ctx)
}

// RestartTemporal stops the Temporal server and starts it again on the same
// port and SQLite file.
func (s *Stack) RestartTemporal(ctx context.Context) error {
	if s.temporal != nil {
		s.temporal.Stop(10 * time.Second)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return s.startTemporal(ctx)
}

// Stop stops every process of the stack.
func (s *Stack) Stop() {
	if s.temporal != nil {
		s.temporal.Stop(10 * time.Second)
	}
	if s.s3 != nil {
		s.s3.Stop(10 * time.Second)
	}
}

// quietLogger drops the SDK's logs during start-up polling.
type quietLogger struct{}

func (quietLogger) Debug(string, ...interface{}) {}
func (quietLogger) Info(string, ...interface{})  {}
func (quietLogger) Warn(string, ...interface{})  {}
func (quietLogger) Error(string, ...interface{}) {}
