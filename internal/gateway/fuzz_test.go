package gateway

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
)

// FuzzProvidersFile loads arbitrary YAML as a providers file. It must never
// panic; an accepted file gives providers a model name can reach, with
// http(s) base URLs and sane concurrency bounds.
func FuzzProvidersFile(f *testing.F) {
	for _, s := range []string{
		"providers:\n  openai:\n    base_url: https://api.openai.com/v1\n    api_key_env: OPENAI_API_KEY\n    max_concurrency: 32\n    prices: {input_per_mtok: 0.15, output_per_mtok: 0.6}\n    models:\n      gpt-4o: {input_per_mtok: 2.5}\n",
		"baseline_url: http://127.0.0.1:8400/v1\nproviders:\n  rm:\n    base_url: http://gpu:8001/v1\n    reward_models: [\"*\"]\n",
		"providers:\n  x:\n    base_url: http://u:p@h/v1\n", "providers:\n  x: null\n", "providers:\n  \"a/b\":\n    base_url: http://h\n",
		"providers:\n  x:\n    base_url: http://h\n    min_concurrency: 5\n    max_concurrency: 2\n", "providers: [1]\n", "\xff", "providers:\n  x:\n    timeout: -1s\n",
	} {
		f.Add([]byte(s))
	}
	noEnv := func(string) (string, bool) { return "", false }
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := LoadConfig(bytes.NewReader(data), noEnv)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "gateway: ") {
				t.Fatalf("error without the package prefix: %v", err)
			}
			return
		}
		for _, name := range cfg.Names() {
			p := cfg.Providers[name]
			if p.Name != name {
				t.Fatalf("provider %q is named %q", name, p.Name)
			}
			if prov, _, err := ParseModel(name + "/m"); err != nil || prov != name {
				t.Fatalf("provider %q cannot be named in a model: %v", name, err)
			}
			// URL schemes are case-insensitive (RFC 3986 3.1; net/url lowers them).
			if base := strings.ToLower(p.BaseURL); !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
				t.Fatalf("provider %q: base_url %q accepted", name, p.BaseURL)
			}
			if p.MinConcurrency < 1 || p.MinConcurrency > p.InitialConcurrency || p.InitialConcurrency > p.MaxConcurrency || p.Timeout <= 0 {
				t.Fatalf("provider %q: concurrency %d/%d/%d, timeout %v accepted", name, p.MinConcurrency, p.InitialConcurrency, p.MaxConcurrency, p.Timeout)
			}
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("an accepted file does not validate again: %v", err)
		}
	})
}

// FuzzParseModel checks that a model name that parses splits into parts
// that join back to it.
func FuzzParseModel(f *testing.F) {
	for _, s := range []string{"openai/gpt-4o-mini", "vllm/Qwen/Qwen3-8B", "baseline/", "/x", "x", "", "a//b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		prov, model, err := ParseModel(name)
		if err != nil {
			return
		}
		if prov == "" || model == "" || strings.Contains(prov, "/") || prov+"/"+model != name {
			t.Fatalf("ParseModel(%q) = %q, %q", name, prov, model)
		}
	})
}

// FuzzParseRewardResponse feeds arbitrary bodies to the reward (pooling)
// reply parser: it must never panic, and a score it accepts is finite.
func FuzzParseRewardResponse(f *testing.F) {
	for _, s := range []string{
		`{"id": "p", "model": "rm", "data": [{"index": 0, "data": [0.73]}], "usage": {"prompt_tokens": 12}}`,
		`{"data": [{"data": [[0.1], [0.2], [0.9]]}]}`, `{"data": [{"data": [0.1, 0.2]}]}`, `{"data": [{"data": null}]}`,
		`{"data": [{"data": "AAAA"}]}`, `{"data": []}`, `{"data": [{"data": [[]]}]}`, `[]`, `{"data": [{"data": [1e999]}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := ParseRewardResponse(body)
		if err != nil {
			return
		}
		if math.IsNaN(r.Score) || math.IsInf(r.Score, 0) {
			t.Fatalf("accepted score %v from %q", r.Score, body)
		}
	})
}

// FuzzDecodeAnswer: the one-step decode of an answer line (jsonv2) accepts
// nothing encoding/json rejects, and what both accept they decode alike,
// so that a batch answer is what the full decode would have made of it.
func FuzzDecodeAnswer(f *testing.F) {
	f.Add(`{"id":"b1","custom_id":"k1","response":{"status_code":200,"request_id":"r","body":{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"6912"},"finish_reason":"stop"}],"usage":{"prompt_tokens":31,"completion_tokens":2}}},"error":null}`)
	f.Add(`{"custom_id":"k1","response":{"status_code":200,"body":{"choices":[{"message":{"content":null,"tool_calls":[{"id":"t","type":"function","function":{"name":"f","arguments":"{}"}}]}}]}}}`)
	f.Add(`{"CUSTOM_ID":"k","Response":{"Status_Code":200,"BODY":{"Choices":[{"Message":{"Content":"x"}}]}}}`)
	f.Add(`{"custom_id":"a","custom_id":"b","response":{"status_code":200}}`)
	f.Add("{\"custom_id\":\"\xff\",\"response\":{\"status_code\":200,\"body\":{\"choices\":[{\"message\":{\"content\":\"\\ud800\"}}]}}}")
	f.Add(`{"customid":"k","response":{"status_code":200.0}}`)
	f.Fuzz(func(t *testing.T, line string) {
		var want answerLine
		werr := json.Unmarshal([]byte(line), &want)
		var got answerLine
		gerr := jsonv2.Unmarshal([]byte(line), &got, answerOptions)
		if gerr == nil && werr != nil {
			t.Fatalf("jsonv2 accepts what encoding/json rejects (%v): %q", werr, line)
		}
		if gerr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("decoded %+v, encoding/json %+v: %q", got, want, line)
		}
	})
}
