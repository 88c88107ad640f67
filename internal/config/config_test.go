package config

import (
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
		{name: "file then env", file: "temporal:\n  address: f:1\n  task_queue: q\ns3:\n  bucket: fb\n  endpoint: http://f:2\n",
			env: map[string]string{"TEMPORAL_ADDRESS": "e:1"}, check: func(t *testing.T, c Config) {
				if c.Temporal.Address != "e:1" || c.Temporal.TaskQueue != "q" || c.S3.Bucket != "fb" || c.S3.AccessKeyID != "" {
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
