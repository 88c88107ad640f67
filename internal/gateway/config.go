package gateway

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/benchline/benchline/internal/modelapi"
)

// Defaults applied by Config.Validate to providers that leave a field zero.
const (
	DefaultMaxConcurrency = 16
	DefaultTimeout        = 120 * time.Second
	// DefaultMaxRetryAfter caps the wait a provider's Retry-After may ask
	// for (Provider.MaxRetryAfter).
	DefaultMaxRetryAfter = time.Minute
	DefaultOpenAIBaseURL = "https://api.openai.com/v1"
	DefaultBaselineURL   = "http://127.0.0.1:8400/v1"
	// BaselineProvider is the built-in provider serving internal/baseline.
	BaselineProvider = modelapi.BaselineProvider
)

// Env looks up environment variables. os.LookupEnv satisfies it; tests
// inject a map.
type Env func(key string) (string, bool)

func defaultEnv(k string) (string, bool) { return os.LookupEnv(k) }

// WithBaselineURL returns env with BENCHLINE_BASELINE_URL set to url (the
// address of a baseline server started in-process or by a test); a nil env
// has no other variable.
func WithBaselineURL(url string, env Env) Env {
	return func(k string) (string, bool) {
		if k == "BENCHLINE_BASELINE_URL" {
			return url, true
		}
		if env == nil {
			return "", false
		}
		return env(k)
	}
}

// Prices are US dollars per million tokens.
type Prices struct {
	InputPerMTok  float64 `yaml:"input_per_mtok" json:"input_per_mtok"`
	OutputPerMTok float64 `yaml:"output_per_mtok" json:"output_per_mtok"`
}

// Cost is the price of a call's tokens.
func (p Prices) Cost(promptTokens, completionTokens int) float64 {
	return (float64(promptTokens)*p.InputPerMTok + float64(completionTokens)*p.OutputPerMTok) / 1e6
}

// Provider is one OpenAI-compatible endpoint.
type Provider struct {
	// Name is the provider's key in the file, the part of a model name
	// before the first slash.
	Name string `yaml:"-" json:"name"`
	// BaseURL of the OpenAI-compatible API, ending in /v1. Required.
	BaseURL string `yaml:"base_url" json:"base_url"`
	// APIKeyEnv names the environment variable holding the API key; empty
	// means no Authorization header. The key is read at call time and never
	// stored.
	APIKeyEnv string `yaml:"api_key_env" json:"api_key_env,omitempty"`
	// RequestsPerMinute caps requests of all workers sharing WorkerShare;
	// 0 means unlimited.
	RequestsPerMinute float64 `yaml:"requests_per_minute" json:"requests_per_minute,omitempty"`
	// TokensPerMinute caps estimated prompt+completion tokens; 0 means
	// unlimited.
	TokensPerMinute float64 `yaml:"tokens_per_minute" json:"tokens_per_minute,omitempty"`
	// MaxConcurrency bounds requests in flight; default DefaultMaxConcurrency.
	MaxConcurrency int `yaml:"max_concurrency" json:"max_concurrency"`
	// InitialConcurrency is where the adaptive limit starts; default
	// MaxConcurrency.
	InitialConcurrency int `yaml:"initial_concurrency" json:"initial_concurrency"`
	// MinConcurrency is the floor of the adaptive limit; default 1.
	MinConcurrency int `yaml:"min_concurrency" json:"min_concurrency"`
	// Timeout bounds one HTTP attempt; default DefaultTimeout.
	Timeout time.Duration `yaml:"timeout" json:"timeout"`
	// MaxRetryAfter caps the wait a 429 or 503 may ask for (Retry-After,
	// retry-after-ms): a longer one is cut to it; default
	// DefaultMaxRetryAfter.
	MaxRetryAfter time.Duration `yaml:"max_retry_after" json:"max_retry_after"`
	// Prices apply to every model of the provider unless Models overrides.
	Prices Prices `yaml:"prices" json:"prices"`
	// Models holds per-model prices, keyed by the model name after the
	// provider prefix.
	Models map[string]Prices `yaml:"models" json:"models,omitempty"`
	// JSONSchema says whether the endpoint accepts response_format
	// json_schema; when false such requests are sent as json_object with
	// the schema appended to the system prompt. Default true.
	JSONSchema *bool `yaml:"json_schema" json:"json_schema,omitempty"`
	// RewardModels names the provider's scalar reward models (ModelReward):
	// exact model names, or prefixes ending in "*" ("*" alone: every model
	// of the provider). They are called with Reward, never Complete. The
	// baseline provider always has "reward-*".
	RewardModels []string `yaml:"reward_models" json:"reward_models,omitempty"`
	// RewardURL is the URL of the reward (vLLM pooling) endpoint; default
	// BaseURL without a trailing "/v1", plus "/pooling" (vLLM serves
	// /pooling at the server root).
	RewardURL string `yaml:"reward_url" json:"reward_url,omitempty"`
	// Batch configures the provider's files-and-batches API (batch mode:
	// `benchline eval --batch`); nil or enabled: false means the provider
	// is always called interactively, also in batch runs.
	Batch *BatchConfig `yaml:"batch" json:"batch,omitempty"`
	// Implicit says LoadConfig added the provider (the built-in "openai" or
	// "baseline"); the file did not define it.
	Implicit bool `yaml:"-" json:"implicit,omitempty"`
}

// KindOf returns the kind of model (the name after the provider prefix).
func (p Provider) KindOf(model string) modelapi.ModelKind {
	for _, pat := range p.RewardModels {
		if prefix, ok := strings.CutSuffix(pat, "*"); ok && strings.HasPrefix(model, prefix) || pat == model {
			return modelapi.ModelReward
		}
	}
	return modelapi.ModelChat
}

// RewardEndpoint is the URL reward requests are posted to.
func (p Provider) RewardEndpoint() string {
	if p.RewardURL != "" {
		return p.RewardURL
	}
	return strings.TrimSuffix(strings.TrimRight(p.BaseURL, "/"), "/v1") + "/pooling"
}

// baselineRewardModels is the pattern of the baseline server's reward
// models (internal/baseline: reward-reference, reward-noisy-<p>, ...).
const baselineRewardModels = "reward-*"

// PricesFor returns the prices of model.
func (p Provider) PricesFor(model string) Prices {
	if m, ok := p.Models[model]; ok {
		return m
	}
	return p.Prices
}

// SupportsJSONSchema reports whether response_format json_schema is sent as is.
func (p Provider) SupportsJSONSchema() bool { return p.JSONSchema == nil || *p.JSONSchema }

// Config is the providers file.
//
//	providers:
//	  openai:
//	    base_url: https://api.openai.com/v1
//	    api_key_env: OPENAI_API_KEY
//	    requests_per_minute: 500
//	    tokens_per_minute: 200000
//	    max_concurrency: 32
//	    timeout: 60s
//	    prices: {input_per_mtok: 0.15, output_per_mtok: 0.60}
//	    models:
//	      gpt-4o: {input_per_mtok: 2.50, output_per_mtok: 10.00}
//	    batch:                 # files and batches API (eval --batch); see BatchConfig
//	      enabled: true
//	      max_requests: 50000
//	      max_bytes: 200000000
//	      completion_window: 24h
//	      poll_interval: 30s
//	      discount: 0.5
//	  vllm:
//	    base_url: http://gpu-box:8000/v1
//	    max_concurrency: 64
//	    json_schema: true
//	  rm:
//	    base_url: http://gpu-box:8001/v1
//	    reward_models: ["*"]   # scalar reward models, called with Reward
//
// Two providers are implicit unless the file defines them: "openai", from
// OPENAI_BASE_URL (default DefaultOpenAIBaseURL) and OPENAI_API_KEY, and
// "baseline", the built-in baseline server at BaselineURL (from
// BENCHLINE_BASELINE_URL, default DefaultBaselineURL) with zero prices;
// the baseline provider always has "reward-*" among its reward_models.
type Config struct {
	// BaselineURL is the base URL of the built-in baseline provider.
	BaselineURL string `yaml:"baseline_url" json:"baseline_url,omitempty"`
	// Providers by name.
	Providers map[string]*Provider `yaml:"providers" json:"providers"`
}

// LoadConfig reads a providers file from r (nil means no file: environment
// only), adds the implicit providers, applies defaults and validates.
// env defaults to os.LookupEnv.
func LoadConfig(r io.Reader, env Env) (*Config, error) {
	if env == nil {
		env = os.LookupEnv
	}
	cfg := &Config{}
	if r != nil {
		dec := yaml.NewDecoder(r)
		dec.KnownFields(true)
		if err := dec.Decode(cfg); err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("gateway: parse providers file: %w", err)
		}
	}
	if cfg.Providers == nil {
		cfg.Providers = map[string]*Provider{}
	}
	if _, ok := cfg.Providers["openai"]; !ok {
		base, ok := env("OPENAI_BASE_URL")
		if !ok || base == "" {
			base = DefaultOpenAIBaseURL
		}
		cfg.Providers["openai"] = &Provider{BaseURL: base, APIKeyEnv: "OPENAI_API_KEY", Implicit: true, Batch: &BatchConfig{Enabled: true}}
	}
	if _, ok := cfg.Providers[BaselineProvider]; !ok {
		base := cfg.BaselineURL
		if v, ok := env("BENCHLINE_BASELINE_URL"); ok && v != "" && base == "" {
			base = v
		}
		if base == "" {
			base = DefaultBaselineURL
		}
		cfg.Providers[BaselineProvider] = &Provider{BaseURL: base, MaxConcurrency: 64, Implicit: true,
			Batch: &BatchConfig{Enabled: true, PollInterval: time.Second}}
	}
	if b := cfg.Providers[BaselineProvider]; b != nil && !slices.Contains(b.RewardModels, baselineRewardModels) {
		b.RewardModels = append(b.RewardModels, baselineRewardModels)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// Validate applies defaults and checks every provider.
func (c *Config) Validate() error {
	var errs []error
	for _, name := range c.Names() {
		p := c.Providers[name]
		if p == nil {
			errs = append(errs, fmt.Errorf("provider %q: empty", name))
			continue
		}
		p.Name = name
		if err := p.validate(); err != nil {
			errs = append(errs, fmt.Errorf("provider %q: %w", name, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("gateway: invalid providers: %w", err)
	}
	return nil
}

func (p *Provider) validate() error {
	if p.Name == "" || strings.ContainsAny(p.Name, "/ \t") {
		return errors.New("name must be non-empty without slashes or spaces")
	}
	if err := checkURL("base_url", p.BaseURL); err != nil {
		return err
	}
	p.BaseURL = strings.TrimRight(p.BaseURL, "/")
	if p.RewardURL != "" {
		if err := checkURL("reward_url", p.RewardURL); err != nil {
			return err
		}
	}
	for _, pat := range p.RewardModels {
		if pat == "" || strings.Contains(strings.TrimSuffix(pat, "*"), "*") {
			return fmt.Errorf("reward_models: %q must be a model name or a prefix ending in *", pat)
		}
	}
	if p.MaxConcurrency == 0 {
		p.MaxConcurrency = DefaultMaxConcurrency
	}
	if p.MinConcurrency == 0 {
		p.MinConcurrency = 1
	}
	if p.InitialConcurrency == 0 {
		p.InitialConcurrency = p.MaxConcurrency
	}
	if p.Timeout == 0 {
		p.Timeout = DefaultTimeout
	}
	if p.MaxRetryAfter == 0 {
		p.MaxRetryAfter = DefaultMaxRetryAfter
	}
	switch {
	case p.MaxConcurrency < 0 || p.MinConcurrency < 0 || p.InitialConcurrency < 0:
		return errors.New("concurrency must not be negative")
	case p.MinConcurrency > p.MaxConcurrency:
		return errors.New("min_concurrency exceeds max_concurrency")
	case p.InitialConcurrency < p.MinConcurrency || p.InitialConcurrency > p.MaxConcurrency:
		return errors.New("initial_concurrency must be within [min_concurrency, max_concurrency]")
	case p.RequestsPerMinute < 0 || p.TokensPerMinute < 0:
		return errors.New("rate limits must not be negative")
	case p.Timeout < 0:
		return errors.New("timeout must not be negative")
	case p.MaxRetryAfter < 0:
		return errors.New("max_retry_after must not be negative")
	case p.Prices.InputPerMTok < 0 || p.Prices.OutputPerMTok < 0:
		return errors.New("prices must not be negative")
	}
	for m, pr := range p.Models {
		if pr.InputPerMTok < 0 || pr.OutputPerMTok < 0 {
			return fmt.Errorf("model %q: prices must not be negative", m)
		}
	}
	if p.Batch != nil {
		if err := p.Batch.validate(); err != nil {
			return fmt.Errorf("batch: %w", err)
		}
	}
	return nil
}

// BatchEnabled reports whether batch runs send this provider's requests
// through its batch API.
func (p Provider) BatchEnabled() bool { return p.Batch != nil && p.Batch.Enabled }

func checkURL(field, s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s %q must be an http(s) URL", field, s)
	}
	if u.User != nil {
		return fmt.Errorf("%s must not carry credentials; use api_key_env", field)
	}
	return nil
}

// Names returns the provider names, sorted.
func (c *Config) Names() []string {
	names := make([]string, 0, len(c.Providers))
	for n := range c.Providers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ParseModel splits "<provider>/<model>". The model part may itself contain
// slashes ("vllm/Qwen/Qwen3-8B").
func ParseModel(name string) (provider, model string, err error) {
	if provider, model, err = modelapi.ParseModel(name); err != nil {
		return "", "", fmt.Errorf("gateway: %w", err)
	}
	return provider, model, nil
}
