package gateway

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func mapEnv(m map[string]string) Env {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestLoadConfigFile(t *testing.T) {
	in := `
providers:
  openai:
    base_url: https://api.openai.com/v1/
    api_key_env: OPENAI_API_KEY
    requests_per_minute: 500
    tokens_per_minute: 200000
    max_concurrency: 32
    timeout: 45s
    prices: {input_per_mtok: 0.15, output_per_mtok: 0.6}
    models:
      gpt-4o: {input_per_mtok: 2.5, output_per_mtok: 10}
  vllm:
    base_url: http://gpu:8000/v1
    json_schema: false
`
	cfg, err := LoadConfig(strings.NewReader(in), mapEnv(nil))
	require.NoError(t, err)
	assert.Equal(t, []string{"baseline", "openai", "vllm"}, cfg.Names())
	o := cfg.Providers["openai"]
	assert.Equal(t, "https://api.openai.com/v1", o.BaseURL)
	assert.Equal(t, 45*time.Second, o.Timeout)
	assert.Equal(t, 32, o.InitialConcurrency)
	assert.Equal(t, 1, o.MinConcurrency)
	assert.InDelta(t, 2.5e-6*1000+10e-6*100, o.PricesFor("gpt-4o").Cost(1000, 100), 1e-12)
	assert.InDelta(t, 0.15e-6*1000+0.6e-6*100, o.PricesFor("gpt-4o-mini").Cost(1000, 100), 1e-12)
	v := cfg.Providers["vllm"]
	assert.Equal(t, DefaultMaxConcurrency, v.MaxConcurrency)
	assert.Equal(t, DefaultTimeout, v.Timeout)
	assert.False(t, v.SupportsJSONSchema())
	assert.True(t, o.SupportsJSONSchema())
	assert.Equal(t, DefaultBaselineURL, cfg.Providers["baseline"].BaseURL)
}

func TestLoadConfigEnvOnly(t *testing.T) {
	cfg, err := LoadConfig(nil, mapEnv(map[string]string{
		"OPENAI_BASE_URL": "http://localhost:11434/v1", "OPENAI_API_KEY": "sk-x", "BENCHLINE_BASELINE_URL": "http://127.0.0.1:9999/v1"}))
	require.NoError(t, err)
	assert.Equal(t, "http://localhost:11434/v1", cfg.Providers["openai"].BaseURL)
	assert.Equal(t, "OPENAI_API_KEY", cfg.Providers["openai"].APIKeyEnv)
	assert.Equal(t, "http://127.0.0.1:9999/v1", cfg.Providers["baseline"].BaseURL)

	cfg, err = LoadConfig(nil, mapEnv(nil))
	require.NoError(t, err)
	assert.Equal(t, DefaultOpenAIBaseURL, cfg.Providers["openai"].BaseURL)
}

func TestLoadConfigErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"unknown field", "providers:\n  x:\n    base_url: http://a/v1\n    max_conc: 3\n", "max_conc"},
		{"bad url", "providers:\n  x:\n    base_url: ftp://a\n", "base_url"},
		{"credentials in url", "providers:\n  x:\n    base_url: http://u:p@a/v1\n", "credentials"},
		{"initial above max", "providers:\n  x:\n    base_url: http://a/v1\n    max_concurrency: 2\n    initial_concurrency: 3\n", "initial_concurrency"},
		{"negative price", "providers:\n  x:\n    base_url: http://a/v1\n    prices: {input_per_mtok: -1}\n", "prices"},
		{"negative rate", "providers:\n  x:\n    base_url: http://a/v1\n    requests_per_minute: -1\n", "rate"},
		{"bad duration", "providers:\n  x:\n    base_url: http://a/v1\n    timeout: soon\n", "time.Duration"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadConfig(strings.NewReader(tc.in), mapEnv(nil))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestParseModel(t *testing.T) {
	for _, tc := range []struct{ in, p, m string }{
		{"openai/gpt-4o-mini", "openai", "gpt-4o-mini"},
		{"vllm/Qwen/Qwen3-8B", "vllm", "Qwen/Qwen3-8B"},
		{"baseline/noisy-0.2", "baseline", "noisy-0.2"},
		{"gpt-4o", "", ""},
		{"/x", "", ""},
		{"openai/", "", ""},
	} {
		p, m, err := ParseModel(tc.in)
		if tc.p == "" {
			assert.Error(t, err, tc.in)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, [2]string{tc.p, tc.m}, [2]string{p, m})
	}
}
