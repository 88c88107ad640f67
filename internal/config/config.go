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
// apply only when neither the file (an s3 section) nor the environment
// (BENCHLINE_S3_ENDPOINT, BENCHLINE_S3_BUCKET) says anything about S3;
// otherwise the AWS default credential chain and region are used, with
// bucket "benchline" unless one is given.
//
// Every setting is parsed and checked by one rule whatever its source (see
// Settings), so a value fails from the file exactly as it fails from the
// environment, and the error names where it came from: the file, line and
// key, or the variable. An empty value means "not given" in both.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/benchline/benchline/internal/blob/s3blob"
	"github.com/benchline/benchline/internal/limits"
	"github.com/benchline/benchline/internal/secret"
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
	// Limits bound what comes in (source lines and files, model replies);
	// zero fields are the defaults (see package limits).
	Limits limits.Limits `yaml:"limits"`
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
	APIKey secret.Value `yaml:"api_key"`
	// TLS is mutual TLS to a self-hosted cluster: the client's certificate
	// and key, the CA that signed the server's certificate, and the name
	// the server's certificate must carry (see docs/DEPLOY.md).
	TLS TemporalTLS `yaml:",inline"`
}

// TemporalTLS is mutual TLS to Temporal. Setting CertFile (with KeyFile)
// or CAFile turns TLS on; the files are read when the client connects.
type TemporalTLS struct {
	CertFile   string `yaml:"tls_cert_file"`   // TEMPORAL_TLS_CERT: the client's certificate (PEM)
	KeyFile    string `yaml:"tls_key_file"`    // TEMPORAL_TLS_KEY: its private key (PEM)
	CAFile     string `yaml:"tls_ca_file"`     // TEMPORAL_TLS_CA: the server's CA (PEM) [the system's roots]
	ServerName string `yaml:"tls_server_name"` // TEMPORAL_TLS_SERVER_NAME [the address's host]
}

// Enabled reports whether any TLS file is set.
func (t TemporalTLS) Enabled() bool { return t.CertFile != "" || t.KeyFile != "" || t.CAFile != "" }

// Default returns the built-in defaults (the dev stack's addresses).
func Default() Config {
	return Config{
		Temporal: Temporal{Address: "127.0.0.1:7233", Namespace: "default", TaskQueue: "benchline"},
		S3:       devS3(),
	}
}

func devS3() s3blob.Config {
	return s3blob.Config{Endpoint: "http://127.0.0.1:9000", Region: "us-east-1", Bucket: "benchline", PathStyle: true,
		AccessKeyID: DevAccessKey, SecretAccessKey: secret.New(DevSecretKey)}
}

// awsS3 is where S3 settings start once a source leaves the dev defaults.
func awsS3() s3blob.Config { return s3blob.Config{Bucket: "benchline"} }

// A SettingError says which value of which setting is wrong, and where it
// came from.
type SettingError struct {
	// Source is "FILE:LINE: KEY" for the file, the variable's name for the
	// environment, or "KEY" for a Config built in code.
	Source string
	Key    string // the YAML key, e.g. "models.worker_share"
	Value  string
	// Want says what a valid value looks like.
	Want string
}

func (e *SettingError) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("config: %s: %s", e.Source, e.Want)
	}
	return fmt.Sprintf("config: %s: %q: %s", e.Source, e.Value, e.Want)
}

// A Setting is one configuration key: its YAML path, its environment
// variable (empty for file-only keys) and the one rule that parses and
// checks it.
type Setting struct {
	Key      string // section.field
	Env      string
	required bool // must not be unset after loading
	rule
}

// A rule parses and checks a value, whatever its source.
type rule struct {
	// set parses v (never empty) into c; when v is not valid it returns
	// what a valid value looks like and leaves c alone.
	set func(c *Config, v string) (want string)
	// get is the current value as text, "" when unset.
	get func(c *Config) string
	// secret: the value is a credential, never quoted in an error.
	secret bool
}

// Settings lists every key, in the order the README documents them.
var Settings = []Setting{
	{Key: "temporal.address", Env: "TEMPORAL_ADDRESS", required: true, rule: hostPort(func(c *Config) *string { return &c.Temporal.Address })},
	{Key: "temporal.namespace", Env: "TEMPORAL_NAMESPACE", required: true, rule: word(func(c *Config) *string { return &c.Temporal.Namespace })},
	{Key: "temporal.task_queue", Env: "BENCHLINE_TASK_QUEUE", required: true, rule: word(func(c *Config) *string { return &c.Temporal.TaskQueue })},
	{Key: "temporal.api_key", Env: "TEMPORAL_API_KEY", rule: secretText(func(c *Config) *secret.Value { return &c.Temporal.APIKey })},
	{Key: "temporal.tls_cert_file", Env: "TEMPORAL_TLS_CERT", rule: file(func(c *Config) *string { return &c.Temporal.TLS.CertFile })},
	{Key: "temporal.tls_key_file", Env: "TEMPORAL_TLS_KEY", rule: file(func(c *Config) *string { return &c.Temporal.TLS.KeyFile })},
	{Key: "temporal.tls_ca_file", Env: "TEMPORAL_TLS_CA", rule: file(func(c *Config) *string { return &c.Temporal.TLS.CAFile })},
	{Key: "temporal.tls_server_name", Env: "TEMPORAL_TLS_SERVER_NAME", rule: word(func(c *Config) *string { return &c.Temporal.TLS.ServerName })},
	{Key: "s3.bucket", Env: "BENCHLINE_S3_BUCKET", required: true, rule: bucket(func(c *Config) *string { return &c.S3.Bucket })},
	{Key: "s3.prefix", Env: "BENCHLINE_S3_PREFIX", rule: prefix(func(c *Config) *string { return &c.S3.Prefix })},
	{Key: "s3.endpoint", Env: "BENCHLINE_S3_ENDPOINT", rule: endpoint(func(c *Config) *string { return &c.S3.Endpoint })},
	{Key: "s3.region", Env: "AWS_REGION", rule: word(func(c *Config) *string { return &c.S3.Region })},
	{Key: "s3.path_style", Env: "BENCHLINE_S3_PATH_STYLE", rule: boolean(func(c *Config) *bool { return &c.S3.PathStyle })},
	{Key: "s3.access_key_id", rule: text(func(c *Config) *string { return &c.S3.AccessKeyID })},
	{Key: "s3.secret_access_key", rule: secretText(func(c *Config) *secret.Value { return &c.S3.SecretAccessKey })},
	{Key: "s3.part_size", rule: partSize(func(c *Config) *int64 { return &c.S3.PartSize })},
	{Key: "s3.sign_payload", rule: boolean(func(c *Config) *bool { return &c.S3.SignPayload })},
	{Key: "s3.connect_timeout", rule: timeout(func(c *Config) *time.Duration { return &c.S3.ConnectTimeout })},
	{Key: "s3.response_timeout", rule: timeout(func(c *Config) *time.Duration { return &c.S3.ResponseTimeout })},
	{Key: "s3.idle_timeout", rule: timeout(func(c *Config) *time.Duration { return &c.S3.IdleTimeout })},
	{Key: "s3.max_attempts", rule: positive(func(c *Config) *int { return &c.S3.MaxAttempts })},
	{Key: "models.providers_file", Env: "BENCHLINE_PROVIDERS", rule: file(func(c *Config) *string { return &c.Models.ProvidersFile })},
	{Key: "models.worker_share", Env: "BENCHLINE_WORKER_SHARE", rule: positive(func(c *Config) *int { return &c.Models.WorkerShare })},
	{Key: "models.cache_ttl", Env: "BENCHLINE_CACHE_TTL", rule: duration(func(c *Config) *time.Duration { return &c.Models.CacheTTL })},
	{Key: "limits.max_line_bytes", Env: "BENCHLINE_MAX_LINE_BYTES", rule: intRule(func(c *Config) *int64 { return &c.Limits.LineBytes }, 1024, "want a size in bytes of at least 1024")},
	{Key: "limits.max_source_files", Env: "BENCHLINE_MAX_SOURCE_FILES", rule: positive(func(c *Config) *int { return &c.Limits.SourceFiles })},
	{Key: "limits.max_source_bytes", Env: "BENCHLINE_MAX_SOURCE_BYTES", rule: intRule(func(c *Config) *int64 { return &c.Limits.SourceBytes }, 1024, "want a size in bytes of at least 1024")},
	{Key: "limits.max_reply_bytes", Env: "BENCHLINE_MAX_REPLY_BYTES", rule: intRule(func(c *Config) *int64 { return &c.Limits.ReplyBytes }, 1024, "want a size in bytes of at least 1024")},
}

// shown is what an error quotes of v: nothing for a credential.
func shown(s *Setting, v string) string {
	if s.secret {
		return ""
	}
	return v
}

func setting(key string) *Setting {
	for i := range Settings {
		if Settings[i].Key == key {
			return &Settings[i]
		}
	}
	return nil
}

// Load builds the configuration from the file at path (may be empty: then
// BENCHLINE_CONFIG, then none) and the environment given by lookup
// (os.LookupEnv in production).
func Load(path string, lookup func(string) (string, bool)) (Config, error) {
	if path == "" {
		path, _ = lookup("BENCHLINE_CONFIG")
	}
	if path == "" {
		return Read(nil, "", lookup)
	}
	f, err := os.Open(path)
	if err != nil {
		return Default(), fmt.Errorf("config: %w", err)
	}
	defer f.Close()
	b, err := limits.ReadFile(f, path, limits.FileBytes)
	if err != nil {
		return Default(), fmt.Errorf("config: %w", err)
	}
	return Read(bytes.NewReader(b), path, lookup)
}

// Read builds the configuration from a YAML file's contents r (nil: no
// file), named name in errors, and the environment given by lookup.
func Read(r io.Reader, name string, lookup func(string) (string, bool)) (Config, error) {
	cfg := Default()
	s3Given := false
	if r != nil {
		var err error
		if s3Given, err = applyFile(&cfg, r, name); err != nil {
			return cfg, err
		}
	}
	if err := applyEnv(&cfg, lookup, s3Given); err != nil {
		return cfg, err
	}
	return cfg, cfg.check()
}

// applyFile sets every key the YAML in r gives. It reports whether the file
// has an s3 section.
func applyFile(cfg *Config, r io.Reader, name string) (s3Given bool, err error) {
	var doc yaml.Node
	if err := yaml.NewDecoder(r).Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		return false, fmt.Errorf("config: %s: %w", name, err)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return false, nil
	}
	at := func(n *yaml.Node) string { return fmt.Sprintf("%s:%d", name, n.Line) }
	if root.Kind != yaml.MappingNode {
		return false, fmt.Errorf("config: %s: want a mapping of sections (temporal, s3, models, limits)", at(root))
	}
	sections := map[string]bool{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		kn, vn := root.Content[i], root.Content[i+1]
		sec := kn.Value
		if !slices.Contains([]string{"temporal", "s3", "models", "limits"}, sec) {
			return false, fmt.Errorf("config: %s: unknown section %q (temporal, s3, models, limits)", at(kn), sec)
		}
		if sections[sec] {
			return false, fmt.Errorf("config: %s: section %q given twice", at(kn), sec)
		}
		sections[sec] = true
		if sec == "s3" {
			s3Given = true
			cfg.S3 = awsS3()
		}
		if vn.Kind == yaml.ScalarNode && vn.Tag == "!!null" {
			continue
		}
		if vn.Kind != yaml.MappingNode {
			return false, fmt.Errorf("config: %s: section %q: want a mapping of keys", at(vn), sec)
		}
		seen := map[string]bool{}
		for j := 0; j+1 < len(vn.Content); j += 2 {
			fk, fv := vn.Content[j], vn.Content[j+1]
			key := sec + "." + fk.Value
			s := setting(key)
			if s == nil {
				return false, fmt.Errorf("config: %s: unknown key %q (%s)", at(fk), key, strings.Join(keysOf(sec), ", "))
			}
			if seen[key] {
				return false, fmt.Errorf("config: %s: key %q given twice", at(fk), key)
			}
			seen[key] = true
			if fv.Kind != yaml.ScalarNode {
				return false, &SettingError{Source: at(fk) + ": " + key, Key: key, Want: "want a single value"}
			}
			if fv.Tag == "!!null" || fv.Value == "" {
				continue // not given
			}
			if want := s.set(cfg, fv.Value); want != "" {
				return false, &SettingError{Source: at(fv) + ": " + key, Key: key, Value: shown(s, fv.Value), Want: want}
			}
		}
	}
	return s3Given, nil
}

// keysOf lists the keys of a section, for errors.
func keysOf(section string) []string {
	var out []string
	for _, s := range Settings {
		if sec, field, _ := strings.Cut(s.Key, "."); sec == section {
			out = append(out, field)
		}
	}
	return out
}

// applyEnv sets every setting whose variable is set and not empty.
func applyEnv(cfg *Config, lookup func(string) (string, bool), s3Given bool) error {
	get := func(name string) string {
		v, _ := lookup(name)
		return v
	}
	leaveDev := !s3Given && (get("BENCHLINE_S3_ENDPOINT") != "" || get("BENCHLINE_S3_BUCKET") != "")
	if leaveDev {
		// Leaving the dev defaults: use the AWS chain for credentials.
		cfg.S3 = awsS3()
	}
	for _, s := range Settings {
		if s.Env == "" {
			continue
		}
		v := get(s.Env)
		if v == "" {
			continue
		}
		if want := s.set(cfg, v); want != "" {
			return &SettingError{Source: s.Env, Key: s.Key, Value: shown(&s, v), Want: want}
		}
	}
	if leaveDev && get("BENCHLINE_S3_PATH_STYLE") == "" && cfg.S3.Endpoint != "" {
		cfg.S3.PathStyle = true // S3-compatible servers mostly want path-style
	}
	return nil
}

// Validate checks a configuration built in code (the dev stack's, a
// test's) under the rules Load applies.
func (c Config) Validate() error {
	for _, s := range Settings {
		v := s.get(&c)
		if v == "" {
			if s.required {
				return &SettingError{Source: s.Key, Key: s.Key, Want: "must be set"}
			}
			continue
		}
		probe := c
		if want := s.set(&probe, v); want != "" {
			return &SettingError{Source: s.Key, Key: s.Key, Value: shown(&s, v), Want: want}
		}
	}
	return c.check()
}

// check is what no single setting can say.
func (c Config) check() error {
	if (c.S3.AccessKeyID == "") != c.S3.SecretAccessKey.IsZero() {
		return &SettingError{Source: "s3.access_key_id", Key: "s3.access_key_id",
			Want: "s3.access_key_id and s3.secret_access_key go together (leave both empty for the AWS credential chain)"}
	}
	if t := c.Temporal.TLS; (t.CertFile == "") != (t.KeyFile == "") {
		return &SettingError{Source: "temporal.tls_cert_file", Key: "temporal.tls_cert_file",
			Want: "temporal.tls_cert_file and temporal.tls_key_file go together (TEMPORAL_TLS_CERT, TEMPORAL_TLS_KEY)"}
	}
	if t := c.Temporal.TLS; t.ServerName != "" && !t.Enabled() {
		return &SettingError{Source: "temporal.tls_server_name", Key: "temporal.tls_server_name",
			Want: "temporal.tls_server_name needs temporal.tls_ca_file or a client certificate"}
	}
	return nil
}

// The rules. Each takes where its value lives in a Config.

// strRule is a string rule: check returns what a valid value looks like
// when v is not one.
func strRule(dst func(*Config) *string, check func(v string) string) rule {
	return rule{
		set: func(c *Config, v string) string {
			if want := check(v); want != "" {
				return want
			}
			*dst(c) = v
			return ""
		},
		get: func(c *Config) string { return *dst(c) },
	}
}

func text(dst func(*Config) *string) rule {
	return strRule(dst, func(string) string { return "" })
}

// secretText is a credential: any value, held as a secret.Value. Its
// errors never quote it.
func secretText(dst func(*Config) *secret.Value) rule {
	return rule{
		set:    func(c *Config, v string) string { *dst(c) = secret.New(v); return "" },
		get:    func(c *Config) string { return dst(c).Reveal() },
		secret: true,
	}
}

// word is a value without whitespace.
func word(dst func(*Config) *string) rule {
	return strRule(dst, func(v string) string {
		if strings.IndexFunc(v, isSpaceOrControl) >= 0 {
			return "want a name without spaces"
		}
		return ""
	})
}

func isSpaceOrControl(r rune) bool { return r <= ' ' || r == 0x7f }

func hostPort(dst func(*Config) *string) rule {
	return strRule(dst, func(v string) string {
		const want = "want host:port, e.g. temporal.example.com:7233"
		host, port, err := net.SplitHostPort(v)
		if err != nil || host == "" || strings.ContainsAny(host, "/ ") {
			return want
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return want
		}
		return ""
	})
}

func endpoint(dst func(*Config) *string) rule {
	return strRule(dst, func(v string) string {
		u, err := url.Parse(v)
		switch {
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
			return "want an http:// or https:// URL"
		case u.User != nil:
			return "want a URL without credentials (use the AWS credential chain or s3.access_key_id)"
		}
		return ""
	})
}

// bucketRE is S3's bucket naming rule.
var bucketRE = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)

func bucket(dst func(*Config) *string) rule {
	return strRule(dst, func(v string) string {
		if !bucketRE.MatchString(v) || strings.Contains(v, "..") {
			return "want an S3 bucket name: 3 to 63 lowercase letters, digits, dots and hyphens"
		}
		return ""
	})
}

func prefix(dst func(*Config) *string) rule {
	return strRule(dst, func(v string) string {
		if strings.HasPrefix(v, "/") || strings.Contains(v, "//") || strings.IndexFunc(v, isSpaceOrControl) >= 0 {
			return "want a key prefix such as team/evals: no leading slash, empty segment or spaces"
		}
		return ""
	})
}

// file is a path to an existing regular file.
func file(dst func(*Config) *string) rule {
	return strRule(dst, func(v string) string {
		st, err := os.Stat(v)
		switch {
		case errors.Is(err, os.ErrNotExist):
			return "want an existing file: there is none"
		case err != nil:
			return "want a readable file: " + err.Error()
		case !st.Mode().IsRegular():
			return "want a file, not a directory"
		}
		return ""
	})
}

func boolean(dst func(*Config) *bool) rule {
	return rule{
		set: func(c *Config, v string) string {
			switch strings.ToLower(v) {
			case "true", "yes", "on", "1":
				*dst(c) = true
			case "false", "no", "off", "0":
				*dst(c) = false
			default:
				return "want true or false"
			}
			return ""
		},
		get: func(c *Config) string { return strconv.FormatBool(*dst(c)) },
	}
}

func positive(dst func(*Config) *int) rule {
	return intRule(dst, 1, "want a positive integer")
}

func duration(dst func(*Config) *time.Duration) rule {
	return rule{
		set: func(c *Config, v string) string {
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 {
				return "want a duration such as 168h (0: forever)"
			}
			*dst(c) = d
			return ""
		},
		get: func(c *Config) string { return dst(c).String() },
	}
}

// timeout is a positive duration (0 reads back as unset: the default).
func timeout(dst func(*Config) *time.Duration) rule {
	return rule{
		set: func(c *Config, v string) string {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return "want a positive duration such as 10s"
			}
			*dst(c) = d
			return ""
		},
		get: func(c *Config) string {
			if *dst(c) == 0 {
				return ""
			}
			return dst(c).String()
		},
	}
}

// minPartSize is S3's smallest multipart part.
const minPartSize = 5 << 20

func partSize(dst func(*Config) *int64) rule {
	return intRule(dst, minPartSize, fmt.Sprintf("want a size in bytes of at least %d (5 MiB, S3's smallest part)", minPartSize))
}

// intRule is an integer of at least min; 0 reads back as unset.
func intRule[T int | int64](dst func(*Config) *T, min T, want string) rule {
	return rule{
		set: func(c *Config, v string) string {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || T(n) < min || int64(T(n)) != n {
				return want
			}
			*dst(c) = T(n)
			return ""
		},
		get: func(c *Config) string { return intOrEmpty(int64(*dst(c))) },
	}
}

// intOrEmpty is n as text, "" for 0 (unset).
func intOrEmpty(n int64) string {
	if n == 0 {
		return ""
	}
	return strconv.FormatInt(n, 10)
}
