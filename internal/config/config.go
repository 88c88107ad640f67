// Package config is benchline's typed configuration: where Temporal and the
// object store are, and the defaults that make the embedded dev stack work
// with no configuration at all.
//
// Precedence, lowest first: built-in defaults, the YAML file (--config or
// BENCHLINE_CONFIG), environment variables, command-line flags.
//
// Defaults: Temporal at 127.0.0.1:7233, namespace "default", task queue
// "benchline"; S3 at http://127.0.0.1:9000 (the dev stack's MinIO), bucket
// "benchline", path-style, with the dev stack's credentials. The S3 defaults
// apply only when neither the file nor the environment says anything about
// S3 (BENCHLINE_S3_ENDPOINT, BENCHLINE_S3_BUCKET); otherwise the AWS default
// credential chain and region are used.
package config

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/benchline/benchline/internal/blob/s3blob"
)

// Dev stack credentials (loopback only; never used against a real endpoint).
const (
	DevAccessKey = "benchline"
	DevSecretKey = "benchline-dev-secret"
)

// Config is the whole configuration.
type Config struct {
	Temporal Temporal      `yaml:"temporal"`
	S3       s3blob.Config `yaml:"s3"`
	Models   Models        `yaml:"models"`
}

// Models says where the model providers file is (see docs/gateway.md).
type Models struct {
	// ProvidersFile is the gateway's providers file; BENCHLINE_PROVIDERS.
	// Without one, "openai" comes from OPENAI_API_KEY/OPENAI_BASE_URL and
	// "baseline" from BENCHLINE_BASELINE_URL [http://127.0.0.1:8400/v1].
	ProvidersFile string `yaml:"providers_file"`
	// WorkerShare divides every provider's request and token budgets by the
	// number of worker processes that share them (BENCHLINE_WORKER_SHARE)
	// [1]: the per-process limiters then hold the deployment's limits
	// together. See docs/gateway.md, "Limits across workers".
	WorkerShare int `yaml:"worker_share"`
	// CacheTTL ignores cached model answers older than this
	// (BENCHLINE_CACHE_TTL, e.g. "168h") [0: kept forever].
	CacheTTL time.Duration `yaml:"cache_ttl"`
}

// Temporal says how to reach the Temporal service.
type Temporal struct {
	Address   string `yaml:"address"`    // TEMPORAL_ADDRESS [127.0.0.1:7233]
	Namespace string `yaml:"namespace"`  // TEMPORAL_NAMESPACE [default]
	TaskQueue string `yaml:"task_queue"` // BENCHLINE_TASK_QUEUE [benchline]
	// APIKey enables TLS with an API key (Temporal Cloud); TEMPORAL_API_KEY.
	APIKey string `yaml:"api_key"`
}

// Default returns the built-in defaults (the dev stack's addresses).
func Default() Config {
	return Config{
		Temporal: Temporal{Address: "127.0.0.1:7233", Namespace: "default", TaskQueue: "benchline"},
		S3: s3blob.Config{Endpoint: "http://127.0.0.1:9000", Region: "us-east-1", Bucket: "benchline", PathStyle: true,
			AccessKeyID: DevAccessKey, SecretAccessKey: DevSecretKey},
	}
}

// Load builds the configuration from the file at path (may be empty: then
// BENCHLINE_CONFIG, then none) and the environment given by lookup
// (os.LookupEnv in production).
func Load(path string, lookup func(string) (string, bool)) (Config, error) {
	cfg := Default()
	if path == "" {
		path, _ = lookup("BENCHLINE_CONFIG")
	}
	s3Given := false
	if path != "" {
		f, err := os.Open(path)
		if err != nil {
			return cfg, fmt.Errorf("config: %w", err)
		}
		defer f.Close()
		var given bool
		cfg, given, err = parse(f, cfg)
		if err != nil {
			return cfg, fmt.Errorf("config: %s: %w", path, err)
		}
		s3Given = given
	}
	if err := applyEnv(&cfg, lookup, s3Given); err != nil {
		return cfg, err
	}
	return cfg, cfg.Validate()
}

func parse(r io.Reader, base Config) (Config, bool, error) {
	var raw struct {
		Temporal *Temporal      `yaml:"temporal"`
		S3       *s3blob.Config `yaml:"s3"`
		Models   *Models        `yaml:"models"`
	}
	dec := yaml.NewDecoder(r)
	dec.KnownFields(true)
	if err := dec.Decode(&raw); err != nil && !errors.Is(err, io.EOF) {
		return base, false, err
	}
	if raw.Temporal != nil {
		t := *raw.Temporal
		if t.Address != "" {
			base.Temporal.Address = t.Address
		}
		if t.Namespace != "" {
			base.Temporal.Namespace = t.Namespace
		}
		if t.TaskQueue != "" {
			base.Temporal.TaskQueue = t.TaskQueue
		}
		base.Temporal.APIKey = t.APIKey
	}
	if raw.Models != nil {
		base.Models = *raw.Models
	}
	if raw.S3 != nil {
		base.S3 = *raw.S3
		return base, true, nil
	}
	return base, false, nil
}

func applyEnv(cfg *Config, lookup func(string) (string, bool), s3Given bool) error {
	str := func(name string, dst *string) {
		if v, ok := lookup(name); ok && v != "" {
			*dst = v
		}
	}
	str("TEMPORAL_ADDRESS", &cfg.Temporal.Address)
	str("TEMPORAL_NAMESPACE", &cfg.Temporal.Namespace)
	str("TEMPORAL_API_KEY", &cfg.Temporal.APIKey)
	str("BENCHLINE_TASK_QUEUE", &cfg.Temporal.TaskQueue)
	str("BENCHLINE_PROVIDERS", &cfg.Models.ProvidersFile)
	if v, ok := lookup("BENCHLINE_CACHE_TTL"); ok && v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return fmt.Errorf("config: BENCHLINE_CACHE_TTL=%q: want a duration such as 168h", v)
		}
		cfg.Models.CacheTTL = d
	}
	if v, ok := lookup("BENCHLINE_WORKER_SHARE"); ok && v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("config: BENCHLINE_WORKER_SHARE=%q: want a positive integer", v)
		}
		cfg.Models.WorkerShare = n
	}

	_, ep := lookup("BENCHLINE_S3_ENDPOINT")
	_, bk := lookup("BENCHLINE_S3_BUCKET")
	if (ep || bk) && !s3Given {
		// Leaving the dev defaults: use the AWS chain for credentials.
		cfg.S3 = s3blob.Config{Bucket: "benchline"}
	}
	str("BENCHLINE_S3_ENDPOINT", &cfg.S3.Endpoint)
	str("BENCHLINE_S3_BUCKET", &cfg.S3.Bucket)
	str("BENCHLINE_S3_PREFIX", &cfg.S3.Prefix)
	str("AWS_REGION", &cfg.S3.Region)
	if v, ok := lookup("BENCHLINE_S3_PATH_STYLE"); ok && v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("config: BENCHLINE_S3_PATH_STYLE=%q: want true or false", v)
		}
		cfg.S3.PathStyle = b
	} else if (ep || bk) && !s3Given && cfg.S3.Endpoint != "" {
		cfg.S3.PathStyle = true // S3-compatible servers mostly want path-style
	}
	return nil
}

// Validate checks the configuration.
func (c Config) Validate() error {
	var errs []string
	if c.Temporal.Address == "" {
		errs = append(errs, "temporal.address is empty")
	}
	if c.Temporal.TaskQueue == "" {
		errs = append(errs, "temporal.task_queue is empty")
	}
	if c.S3.Bucket == "" {
		errs = append(errs, "s3.bucket is empty")
	}
	if c.S3.Endpoint != "" && !strings.HasPrefix(c.S3.Endpoint, "http://") && !strings.HasPrefix(c.S3.Endpoint, "https://") {
		errs = append(errs, fmt.Sprintf("s3.endpoint %q must start with http:// or https://", c.S3.Endpoint))
	}
	if len(errs) > 0 {
		return fmt.Errorf("config: %s", strings.Join(errs, "; "))
	}
	return nil
}
