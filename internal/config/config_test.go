package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	file := func(body string) string {
		p := filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "_")+".yaml")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name    string
		file    string
		env     map[string]string
		check   func(t *testing.T, c Config)
		wantErr string
	}{
		{name: "defaults are the dev stack", check: func(t *testing.T, c Config) {
			if c.Temporal.Address != "127.0.0.1:7233" || c.S3.Endpoint != "http://127.0.0.1:9000" || c.S3.AccessKeyID != DevAccessKey || !c.S3.PathStyle {
				t.Errorf("%+v", c)
			}
		}},
		{name: "env overrides temporal", env: map[string]string{"TEMPORAL_ADDRESS": "t:1", "TEMPORAL_NAMESPACE": "ns"}, check: func(t *testing.T, c Config) {
			if c.Temporal.Address != "t:1" || c.Temporal.Namespace != "ns" {
				t.Errorf("%+v", c.Temporal)
			}
		}},
		{name: "env S3 drops dev credentials", env: map[string]string{"BENCHLINE_S3_BUCKET": "prod"}, check: func(t *testing.T, c Config) {
			if c.S3.Bucket != "prod" || c.S3.Endpoint != "" || c.S3.AccessKeyID != "" || c.S3.PathStyle {
				t.Errorf("%+v", c.S3)
			}
		}},
		{name: "env S3 endpoint is path-style", env: map[string]string{"BENCHLINE_S3_ENDPOINT": "http://m:9000"}, check: func(t *testing.T, c Config) {
			if !c.S3.PathStyle || c.S3.Bucket != "benchline" {
				t.Errorf("%+v", c.S3)
			}
		}},
		{name: "file then env", file: "temporal:\n  address: f:1\n  task_queue: q\ns3:\n  bucket: file-bucket\n  endpoint: http://f:2\n",
			env: map[string]string{"TEMPORAL_ADDRESS": "e:1"}, check: func(t *testing.T, c Config) {
				if c.Temporal.Address != "e:1" || c.Temporal.TaskQueue != "q" || c.S3.Bucket != "file-bucket" || c.S3.AccessKeyID != "" {
					t.Errorf("%+v", c)
				}
			}},
		{name: "unknown field rejected", file: "temporal:\n  adress: x\n", wantErr: "adress"},
		{name: "bad endpoint", env: map[string]string{"BENCHLINE_S3_ENDPOINT": "m:9000"}, wantErr: "http://"},
		{name: "cache ttl", env: map[string]string{"BENCHLINE_CACHE_TTL": "168h"}, check: func(t *testing.T, c Config) {
			if c.Models.CacheTTL != 168*time.Hour {
				t.Errorf("%+v", c.Models)
			}
		}},
		{name: "bad cache ttl", env: map[string]string{"BENCHLINE_CACHE_TTL": "soon"}, wantErr: "BENCHLINE_CACHE_TTL"},
		{name: "bad bool", env: map[string]string{"BENCHLINE_S3_PATH_STYLE": "maybe"}, wantErr: "PATH_STYLE"},
		{name: "missing file", file: "/nonexistent/x.yaml", wantErr: "x.yaml"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.file
			if path != "" && !strings.HasPrefix(path, "/nonexistent") {
				path = file(tc.file)
			}
			c, err := Load(path, env(tc.env))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, c)
		})
	}
}

// reason is an error's text after its source: "config: SOURCE: REASON".
func reason(t *testing.T, err error, source string) string {
	t.Helper()
	if err == nil {
		t.Fatalf("no error from %s", source)
	}
	msg := err.Error()
	i := strings.Index(msg, source)
	if i < 0 {
		t.Fatalf("error %q does not name %s", msg, source)
	}
	return strings.TrimPrefix(msg[i+len(source):], ": ")
}

// TestSameRulesFromEverySource checks every setting that has an
// environment variable: a bad value fails the same way from the file (the
// error naming the file, line and key) as from the environment (naming the
// variable), and a good value is accepted from both (finding 6:
// worker_share: -3 passed in YAML but not in the environment).
func TestSameRulesFromEverySource(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		key, env string
		bad      []string
		good     string
		check    func(c Config) bool
	}{
		{key: "models.worker_share", env: "BENCHLINE_WORKER_SHARE", bad: []string{"-3", "0", "two", "1.5"}, good: "4",
			check: func(c Config) bool { return c.Models.WorkerShare == 4 }},
		{key: "models.cache_ttl", env: "BENCHLINE_CACHE_TTL", bad: []string{"-1h", "soon", "100"}, good: "168h",
			check: func(c Config) bool { return c.Models.CacheTTL == 168*time.Hour }},
		{key: "s3.path_style", env: "BENCHLINE_S3_PATH_STYLE", bad: []string{"maybe", "2"}, good: "false",
			check: func(c Config) bool { return !c.S3.PathStyle }},
		{key: "s3.endpoint", env: "BENCHLINE_S3_ENDPOINT", bad: []string{"m:9000", "ftp://m", "http://user:pw@m:9000", "http://"}, good: "https://s3.example.com",
			check: func(c Config) bool { return c.S3.Endpoint == "https://s3.example.com" }},
		{key: "s3.bucket", env: "BENCHLINE_S3_BUCKET", bad: []string{"a/b", "UPPER", "x", "has space"}, good: "my-evals",
			check: func(c Config) bool { return c.S3.Bucket == "my-evals" }},
		{key: "s3.prefix", env: "BENCHLINE_S3_PREFIX", bad: []string{"/abs", "a//b"}, good: "team/evals",
			check: func(c Config) bool { return c.S3.Prefix == "team/evals" }},
		{key: "s3.region", env: "AWS_REGION", bad: []string{"us east"}, good: "eu-west-1",
			check: func(c Config) bool { return c.S3.Region == "eu-west-1" }},
		{key: "temporal.address", env: "TEMPORAL_ADDRESS", bad: []string{"nohost", "h:port", "h:70000", "http://h:7233"}, good: "t.example.com:7233",
			check: func(c Config) bool { return c.Temporal.Address == "t.example.com:7233" }},
		{key: "temporal.namespace", env: "TEMPORAL_NAMESPACE", bad: []string{"a b"}, good: "evals",
			check: func(c Config) bool { return c.Temporal.Namespace == "evals" }},
		{key: "temporal.task_queue", env: "BENCHLINE_TASK_QUEUE", bad: []string{"a b"}, good: "bench",
			check: func(c Config) bool { return c.Temporal.TaskQueue == "bench" }},
		{key: "limits.max_source_bytes", env: "BENCHLINE_MAX_SOURCE_BYTES", bad: []string{"0", "-1", "100", "1GiB", "1.5"}, good: "2147483648",
			check: func(c Config) bool { return c.Limits.SourceBytes == 2<<30 }},
		{key: "models.providers_file", env: "BENCHLINE_PROVIDERS", bad: []string{filepath.Join(dir, "missing.yaml"), dir}, good: filepath.Join(dir, "providers.yaml"),
			check: func(c Config) bool { return c.Models.ProvidersFile == filepath.Join(dir, "providers.yaml") }},
	}
	if err := os.WriteFile(filepath.Join(dir, "providers.yaml"), []byte("providers: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		section, field, _ := strings.Cut(tc.key, ".")
		// yamlFile writes v as a plain scalar (worker_share: -3), or quoted.
		yamlFile := func(v string, quoted bool) string {
			p := filepath.Join(dir, strings.ReplaceAll(tc.key, ".", "_")+".yaml")
			body := fmt.Sprintf("# settings\n%s:\n  %s: %s\n", section, field, v)
			if quoted {
				body = fmt.Sprintf("# settings\n%s:\n  %s: %q\n", section, field, v)
			}
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			return p
		}
		for _, v := range tc.bad {
			t.Run(tc.key+"="+v, func(t *testing.T) {
				_, eerr := Load("", env(map[string]string{tc.env: v}))
				fromEnv := reason(t, eerr, tc.env)
				for _, quoted := range []bool{false, true} {
					path := yamlFile(v, quoted)
					_, ferr := Load(path, env(nil))
					fromFile := reason(t, ferr, path+":3: "+tc.key)
					if fromFile != fromEnv {
						t.Errorf("file (quoted %v) says %q, environment says %q", quoted, fromFile, fromEnv)
					}
				}
			})
		}
		t.Run(tc.key+" good", func(t *testing.T) {
			for _, quoted := range []bool{false, true} {
				c, err := Load(yamlFile(tc.good, quoted), env(nil))
				if err != nil || !tc.check(c) {
					t.Errorf("from the file (quoted %v): %v, %+v", quoted, err, c)
				}
			}
			c, err := Load("", env(map[string]string{tc.env: tc.good}))
			if err != nil || !tc.check(c) {
				t.Errorf("from the environment: %v, %+v", err, c)
			}
		})
	}
}

// TestFileErrorsNameTheLine checks that a malformed file is rejected with
// the file, the line and the key.
func TestFileErrorsNameTheLine(t *testing.T) {
	cases := []struct{ name, body, want string }{
		{"unknown key", "models:\n  worker_shares: 2\n", "x.yaml:2: unknown key \"models.worker_shares\" (providers_file, worker_share, cache_ttl)"},
		{"unknown section", "model:\n  worker_share: 2\n", "x.yaml:1: unknown section \"model\""},
		{"key twice", "models:\n  worker_share: 2\n  worker_share: 3\n", "x.yaml:3: key \"models.worker_share\" given twice"},
		{"section twice", "s3:\n  bucket: abc\ns3:\n  region: x\n", "x.yaml:3: section \"s3\" given twice"},
		{"list for a value", "models:\n  worker_share: [1, 2]\n", "x.yaml:2: models.worker_share: want a single value"},
		{"section not a mapping", "models: 3\n", "x.yaml:1: section \"models\": want a mapping"},
		{"not a mapping", "- a\n- b\n", "x.yaml:1: want a mapping of sections"},
		{"bad yaml", "models:\n  worker_share: [\n", "x.yaml: yaml:"},
		{"key without secret", "s3:\n  access_key_id: AKIA\n", "s3.access_key_id and s3.secret_access_key go together"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tc.body), "x.yaml", env(nil))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
	t.Run("empty and null sections are defaults", func(t *testing.T) {
		for _, body := range []string{"", "# nothing\n", "models:\n", "temporal: ~\nmodels: {}\n"} {
			c, err := Read(strings.NewReader(body), "x.yaml", env(nil))
			if err != nil || c != Default() {
				t.Errorf("%q: %v, %+v", body, err, c)
			}
		}
	})
	t.Run("setting error", func(t *testing.T) {
		_, err := Read(strings.NewReader("models:\n  worker_share: -3\n"), "x.yaml", env(nil))
		var se *SettingError
		if !errors.As(err, &se) || se.Key != "models.worker_share" || se.Value != "-3" || se.Source != "x.yaml:2: models.worker_share" {
			t.Errorf("err = %#v", err)
		}
	})
}

// TestValidate checks the same rules on a Config built in code.
func TestValidate(t *testing.T) {
	c := Default()
	if err := c.Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	bad := c
	bad.Models.WorkerShare = -3
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "models.worker_share: \"-3\": want a positive integer") {
		t.Errorf("Validate = %v", err)
	}
	bad = c
	bad.Temporal.TaskQueue = ""
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "temporal.task_queue: must be set") {
		t.Errorf("Validate = %v", err)
	}
}
