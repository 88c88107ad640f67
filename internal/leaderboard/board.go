package leaderboard

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/benchline/benchline/internal/access"
	"github.com/benchline/benchline/internal/benchmark"
	"github.com/benchline/benchline/internal/judge"
	"github.com/benchline/benchline/internal/limits"
	"github.com/benchline/benchline/internal/modelapi"
	"github.com/benchline/benchline/internal/names"
)

// A board file names what a leaderboard shows:
//
//	name: demo                        # word characters and dashes
//	title: benchline demo             # optional
//	benchmarks:
//	  - dataset: bfcl                 # a registered benchmark with a task
//	    version: latest               # or a version id; latest is the default
//	  - dataset: medrubric
//	    judges: {judge: baseline/judge}   # replaces the board's judges here
//	    models: [baseline/reference]      # only these of the board's models here
//	models:
//	  - baseline/reference
//	  - model: openai/gpt-4o-mini
//	    display_name: GPT-4o mini
//	    organisation: OpenAI
//	    licence: proprietary
//	    parameters: undisclosed
//	    link: https://platform.openai.com/docs/models
//	    batch: false                  # this model's runs interactive (overrides settings.batch)
//	judges:                           # role: model, "m1,m2" or a list (a panel)
//	  judge: [baseline/judge, baseline/judge-yes]
//	settings:
//	  temperature: 0
//	  max_tokens: 1024
//	  seed: 7
//	  limit: 100                      # evaluate only the first N samples
//	  shard_size: 500
//	  batch: true                     # runs through the providers' batch APIs (eval --batch)
//	webhook:                          # optional: a JSON POST of changes.json per stamp with changes
//	  url: https://hooks.example.com/benchline   # scheme, host and path only
//	  # or url_env: BOARD_WEBHOOK_URL  # the worker's variable holding a URL with a token
//	  secret_env: BOARD_WEBHOOK_SECRET   # the worker's environment variable holding the HMAC key
//	access:                           # who `leaderboard serve` lets read it (access.Policy); default: no one
//	  groups: [eval-team]
//	  email_domains: [example.com]
//	  tokens: [ci-scores]             # names in serve's --tokens file
//	  anonymous: false                # true counts only with serve --allow-anonymous
//
// The board's judges apply to a benchmark only for the roles its
// registration's demo names (benchmark.Demo.Judges): a benchmark without
// judges gets none, and rmtbench's simulated "user" never reaches
// medrubric. A benchmark's own judges replace the board's for it.

// ErrBadBoard is wrapped by every error of ParseBoard.
var ErrBadBoard = errors.New("bad board file")

// Board is a parsed, validated board file: small, so it travels in the
// RefreshLeaderboard workflow's input (and a schedule's action).
type Board struct {
	Name  string `json:"name"`
	Title string `json:"title,omitempty"`
	// File is where the board was read from, for messages.
	File       string           `json:"file,omitempty"`
	Benchmarks []BoardBenchmark `json:"benchmarks"`
	// Models carry their metadata; Baseline is filled by the refresh.
	Models []Model `json:"models"`
	// Params, Seed, Limit and ShardSize are every run's (runs.Request).
	Params    modelapi.Params `json:"params"`
	Seed      *int            `json:"seed,omitempty"`
	Limit     int64           `json:"limit,omitempty"`
	ShardSize int             `json:"shard_size,omitempty"`
	// Batch runs the board's runs in batch mode (runs.Request.Batch)
	// unless a model says otherwise (Model.Batch).
	Batch bool `json:"batch,omitempty"`
	// Webhook, when it names a URL (Webhook.Due), receives changes.json of every stamp
	// with changes (see Notify).
	Webhook Webhook `json:"webhook,omitzero"`
	// Access is who may read the board through `leaderboard serve`
	// (access.Policy); the zero value: no one (private).
	Access access.Policy `json:"access,omitzero"`
}

// BatchFor reports whether the board runs model's runs in batch mode.
func (b Board) BatchFor(m Model) bool {
	if m.Batch != nil {
		return *m.Batch
	}
	return b.Batch
}

// Digest is the sha256 (hex) of the board's content, whatever file it
// was read from: a board's identity. Two boards with one name and
// different content have different digests.
func (b Board) Digest() string {
	b.File = ""
	j, _ := json.Marshal(b) // plain data: cannot fail
	sum := sha256.Sum256(j)
	return hex.EncodeToString(sum[:])
}

// Webhook is where a board's changes are POSTed. No secret is in the board
// file, which travels in workflow histories and schedules: URL has a scheme,
// host and path only (no credentials, query string or fragment); a URL that
// carries a token is in the environment of the worker that writes the
// stamp, under the variable URLEnv names (one of URL and URLEnv is set);
// SecretEnv names the variable holding the key of the signature header.
type Webhook struct {
	URL       string `json:"url,omitempty" yaml:"url"`
	URLEnv    string `json:"url_env,omitempty" yaml:"url_env"`
	SecretEnv string `json:"secret_env,omitempty" yaml:"secret_env"`
}

// Due reports whether the board names a webhook.
func (w Webhook) Due() bool { return w.URL != "" || w.URLEnv != "" }

// BoardBenchmark is one benchmark of a board.
type BoardBenchmark struct {
	Dataset string `json:"dataset"`
	// Version is a version id, or "latest".
	Version string `json:"version"`
	// Judges are the resolved judges of its runs, by role, each panel as
	// judge.Panel orders it (so the run id matches `benchline eval`'s).
	Judges map[string]string `json:"judges,omitempty"`
	// Models, when set, are the only models of the board evaluated on
	// this benchmark (its cells); nil: all of them.
	Models []string `json:"models,omitempty"`
}

// Evaluates reports whether the board evaluates model on the benchmark.
func (b BoardBenchmark) Evaluates(model string) bool {
	return b.Models == nil || slices.Contains(b.Models, model)
}

// Ref is the dataset reference of a run request: "name@version".
func (b BoardBenchmark) Ref() string { return b.Dataset + "@" + b.Version }

// A ModelRef is a model name in a board file with the key it sits at, for
// the provider check (wfclient.CheckBoard).
type ModelRef struct {
	Key   string // e.g. "models[1]" or "benchmarks[2].judges.judge"
	Model string
}

// ModelRefs lists every model the board names, models first, then each
// benchmark's judges.
func (b Board) ModelRefs() []ModelRef {
	var out []ModelRef
	for i, m := range b.Models {
		out = append(out, ModelRef{fmt.Sprintf("models[%d]", i), m.Model})
	}
	for i, bm := range b.Benchmarks {
		for _, role := range slices.Sorted(maps.Keys(bm.Judges)) {
			for _, m := range judge.Panel(bm.Judges, role) {
				out = append(out, ModelRef{fmt.Sprintf("benchmarks[%d].judges.%s", i, role), m})
			}
		}
	}
	return out
}

var (
	versionRE = regexp.MustCompile(`^[0-9a-f]{1,64}$`)
	roleRE    = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
)

// yaml shapes of the file.
type boardFile struct {
	Name       string                 `yaml:"name"`
	Title      string                 `yaml:"title"`
	Benchmarks []benchmarkEntry       `yaml:"benchmarks"`
	Models     []modelEntry           `yaml:"models"`
	Judges     map[string]judgeValues `yaml:"judges"`
	Settings   settings               `yaml:"settings"`
	Webhook    Webhook                `yaml:"webhook"`
	Access     access.Policy          `yaml:"access"`
}

type benchmarkEntry struct {
	Dataset string                 `yaml:"dataset"`
	Version string                 `yaml:"version"`
	Judges  map[string]judgeValues `yaml:"judges"`
	Models  []string               `yaml:"models"`
}

type settings struct {
	Temperature *float32 `yaml:"temperature"`
	TopP        *float32 `yaml:"top_p"`
	MaxTokens   *int     `yaml:"max_tokens"`
	Seed        *int     `yaml:"seed"`
	Limit       *int64   `yaml:"limit"`
	ShardSize   *int     `yaml:"shard_size"`
	Batch       bool     `yaml:"batch"`
}

// modelEntry is "PROVIDER/MODEL" or a mapping with metadata.
type modelEntry struct{ Model }

type modelMapping struct {
	Model        string `yaml:"model"`
	DisplayName  string `yaml:"display_name,omitempty"`
	Organisation string `yaml:"organisation,omitempty"`
	Licence      string `yaml:"licence,omitempty"`
	Parameters   string `yaml:"parameters,omitempty"`
	Link         string `yaml:"link,omitempty"`
	Batch        *bool  `yaml:"batch,omitempty"`
}

func (m *modelEntry) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		m.Model.Model = n.Value
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: want PROVIDER/MODEL or {model: PROVIDER/MODEL, ...}", n.Line)
	}
	if err := knownKeys(n, "model", "display_name", "organisation", "licence", "parameters", "link", "batch"); err != nil {
		return err
	}
	var mm modelMapping
	if err := n.Decode(&mm); err != nil {
		return err
	}
	m.Model = Model{Model: mm.Model, DisplayName: mm.DisplayName, Organisation: mm.Organisation, Licence: mm.Licence, Parameters: mm.Parameters, Link: mm.Link, Batch: mm.Batch}
	return nil
}

// judgeValues is "m", "m1,m2" or a list of models.
type judgeValues []string

func (j *judgeValues) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		*j = strings.Split(n.Value, ",")
		return nil
	case yaml.SequenceNode:
		var list []string
		if err := n.Decode(&list); err != nil {
			return err
		}
		*j = list
		return nil
	}
	return fmt.Errorf("line %d: want a model, \"m1,m2\" or a list of models", n.Line)
}

// knownKeys refuses keys of a mapping node outside keys (Node.Decode does
// not check them).
func knownKeys(n *yaml.Node, keys ...string) error {
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if !slices.Contains(keys, k.Value) {
			return fmt.Errorf("line %d: unknown key %q (want %s)", k.Line, k.Value, strings.Join(keys, ", "))
		}
	}
	return nil
}

// ReadBoard reads and parses a board file (see ParseBoard).
// A board file larger than limits.FileBytes (1 MiB) is refused unread.
func ReadBoard(path string, reg *benchmark.Registry) (Board, error) {
	f, err := os.Open(path)
	if err != nil {
		return Board{}, fmt.Errorf("leaderboard: board file: %w", err)
	}
	defer f.Close()
	data, err := limits.ReadFile(f, path, limits.FileBytes)
	if err != nil {
		return Board{}, fmt.Errorf("leaderboard: board file: %w: %w", err, ErrBadBoard)
	}
	return ParseBoard(path, data, reg)
}

// ParseBoard parses a board file and checks it: unknown keys, the name,
// each benchmark a registered one with a task, versions, model and judge
// names of the form PROVIDER/MODEL (whether their providers exist is
// wfclient.CheckBoard's check), and the settings' ranges. Errors wrap
// ErrBadBoard and name the file and the key.
func ParseBoard(file string, data []byte, reg *benchmark.Registry) (Board, error) {
	f, err := decodeBoard(file, data)
	if err != nil {
		return Board{}, err
	}
	return validateBoard(file, f, reg)
}

// ReadAccess reads a board file's name and access: key, checking only
// those (`leaderboard serve` needs no benchmark registry).
func ReadAccess(path string) (string, access.Policy, error) {
	fh, err := os.Open(path)
	if err != nil {
		return "", access.Policy{}, fmt.Errorf("leaderboard: board file: %w", err)
	}
	defer fh.Close()
	data, err := limits.ReadFile(fh, path, limits.FileBytes)
	if err != nil {
		return "", access.Policy{}, fmt.Errorf("leaderboard: board file: %w: %w", err, ErrBadBoard)
	}
	f, err := decodeBoard(path, data)
	if err != nil {
		return "", access.Policy{}, err
	}
	if err := names.Name("board", f.Name); err != nil {
		return "", access.Policy{}, fmt.Errorf("leaderboard: %s: name: %v: %w", path, err, ErrBadBoard)
	}
	if err := f.Access.Validate(); err != nil {
		return "", access.Policy{}, fmt.Errorf("leaderboard: %s: access: %v: %w", path, err, ErrBadBoard)
	}
	return f.Name, f.Access.Normal(), nil
}

// decodeBoard decodes a board file's YAML into its shapes, refusing
// unknown keys and values of the wrong type; it checks nothing else.
func decodeBoard(file string, data []byte) (boardFile, error) {
	var f boardFile
	if int64(len(data)) > limits.FileBytes {
		return f, fmt.Errorf("leaderboard: %s: larger than %d bytes: %w", file, limits.FileBytes, ErrBadBoard)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return f, fmt.Errorf("leaderboard: %s: empty board file: %w", file, ErrBadBoard)
		}
		return f, fmt.Errorf("leaderboard: %s: %s: %w", file, strings.TrimPrefix(err.Error(), "yaml: "), ErrBadBoard)
	}
	return f, nil
}

// validateBoard checks a decoded board file (see ParseBoard) and builds
// the Board: the rules of its values, one key at a time.
func validateBoard(file string, f boardFile, reg *benchmark.Registry) (Board, error) {
	bad := func(key, format string, args ...any) error {
		return fmt.Errorf("leaderboard: %s: %s: %s: %w", file, key, fmt.Sprintf(format, args...), ErrBadBoard)
	}
	b := Board{Name: f.Name, Title: f.Title, File: file, Webhook: f.Webhook, Access: f.Access}
	if err := names.Name("board", f.Name); err != nil {
		return Board{}, bad("name", "%v", err)
	}
	if err := f.Access.Validate(); err != nil {
		return Board{}, bad("access", "%v", err)
	}
	b.Access = f.Access.Normal()
	if err := checkWebhook(f.Webhook); err != nil {
		return Board{}, bad("webhook", "%v", err)
	}
	if len(f.Benchmarks) == 0 {
		return Board{}, bad("benchmarks", "want at least one {dataset: NAME}")
	}
	if len(f.Models) == 0 {
		return Board{}, bad("models", "want at least one PROVIDER/MODEL")
	}
	boardJudges, err := resolveJudges("judges", f.Judges)
	if err != nil {
		return Board{}, bad(err.key, "%s", err.msg)
	}
	models := map[string]int{}
	for i, m := range f.Models {
		key := fmt.Sprintf("models[%d]", i)
		if err := checkModelForm(m.Model.Model); err != nil {
			return Board{}, bad(key, "%q: %v", m.Model.Model, err)
		}
		if j, dup := models[m.Model.Model]; dup {
			return Board{}, bad(key, "%s is also models[%d]", m.Model.Model, j)
		}
		models[m.Model.Model] = i
		b.Models = append(b.Models, m.Model)
	}
	seen := map[string]int{}
	for i, e := range f.Benchmarks {
		key := fmt.Sprintf("benchmarks[%d]", i)
		bm, err := reg.Get(e.Dataset)
		if e.Dataset == "" {
			return Board{}, bad(key+".dataset", "missing")
		}
		taskFile := false
		if err != nil {
			_, derr := reg.DynamicBuilder(e.Dataset)
			taskFile = derr == nil // a task file's benchmark, found when the board is refreshed
		}
		if !taskFile && (err != nil || bm.NewTask == nil) {
			return Board{}, bad(key+".dataset", "%q is not a registered benchmark with an evaluation (known: %s) nor a task file's name", e.Dataset, strings.Join(evaluated(reg), ", "))
		}
		version := e.Version
		if version == "" {
			version = "latest"
		}
		if version != "latest" && !versionRE.MatchString(version) {
			return Board{}, bad(key+".version", "%q: want a version id or latest", e.Version)
		}
		if j, dup := seen[e.Dataset+"@"+version]; dup {
			return Board{}, bad(key, "%s@%s is also benchmarks[%d]", e.Dataset, version, j)
		}
		seen[e.Dataset+"@"+version] = i
		js := map[string]string(nil)
		if e.Judges != nil {
			own, err := resolveJudges(key+".judges", e.Judges)
			if err != nil {
				return Board{}, bad(err.key, "%s", err.msg)
			}
			js = own
		} else if bm.Demo != nil {
			for role, panel := range boardJudges {
				if _, ok := bm.Demo.Judges[role]; ok {
					if js == nil {
						js = map[string]string{}
					}
					js[role] = panel
				}
			}
		}
		var only []string
		if e.Models != nil {
			if len(e.Models) == 0 {
				return Board{}, bad(key+".models", "empty: leave it out for every model of the board")
			}
			for j, m := range e.Models {
				if _, ok := models[m]; !ok {
					return Board{}, bad(fmt.Sprintf("%s.models[%d]", key, j), "%q is not one of the board's models", m)
				}
				if slices.Contains(only, m) {
					return Board{}, bad(fmt.Sprintf("%s.models[%d]", key, j), "%s is listed twice", m)
				}
				only = append(only, m)
			}
		}
		b.Benchmarks = append(b.Benchmarks, BoardBenchmark{Dataset: e.Dataset, Version: version, Judges: js, Models: only})
	}
	if err := applySettings(f.Settings, &b); err != nil {
		return Board{}, bad(err.key, "%s", err.msg)
	}
	return b, nil
}

type keyError struct{ key, msg string }

// applySettings checks a board file's settings and sets them on b.
func applySettings(s settings, b *Board) *keyError {
	if s.Temperature != nil {
		if *s.Temperature < 0 || *s.Temperature > 2 {
			return &keyError{"settings.temperature", fmt.Sprintf("%v: want 0 to 2", *s.Temperature)}
		}
		b.Params.Temperature = s.Temperature
	}
	if s.TopP != nil {
		if *s.TopP <= 0 || *s.TopP > 1 {
			return &keyError{"settings.top_p", fmt.Sprintf("%v: want more than 0, at most 1", *s.TopP)}
		}
		b.Params.TopP = *s.TopP
	}
	if s.MaxTokens != nil {
		if *s.MaxTokens <= 0 {
			return &keyError{"settings.max_tokens", fmt.Sprintf("%d: want a positive integer", *s.MaxTokens)}
		}
		b.Params.MaxTokens = *s.MaxTokens
	}
	b.Seed = s.Seed
	if s.Limit != nil {
		if *s.Limit <= 0 {
			return &keyError{"settings.limit", fmt.Sprintf("%d: want a positive integer (leave it out for every sample)", *s.Limit)}
		}
		b.Limit = *s.Limit
	}
	if s.ShardSize != nil {
		if *s.ShardSize <= 0 {
			return &keyError{"settings.shard_size", fmt.Sprintf("%d: want a positive integer", *s.ShardSize)}
		}
		b.ShardSize = *s.ShardSize
	}
	b.Batch = s.Batch
	return nil
}

// resolveJudges turns a judges mapping into runs.Request.Judges: each
// role's models checked for form and ordered as judge.Panel orders them.
func resolveJudges(key string, in map[string]judgeValues) (map[string]string, *keyError) {
	if len(in) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, role := range slices.Sorted(maps.Keys(in)) {
		k := key + "." + role
		if !roleRE.MatchString(role) {
			return nil, &keyError{k, "want a role of letters, digits, _ and -"}
		}
		var list []string
		for _, m := range in[role] {
			m = strings.TrimSpace(m)
			if err := checkModelForm(m); err != nil {
				return nil, &keyError{k, fmt.Sprintf("%q: %v", m, err)}
			}
			list = append(list, m)
		}
		if len(list) == 0 {
			return nil, &keyError{k, "no model"}
		}
		out[role] = judge.NormalPanel(strings.Join(list, ","))
	}
	return out, nil
}

func checkModelForm(name string) error {
	p, m, ok := strings.Cut(name, "/")
	if !ok || p == "" || m == "" || strings.IndexFunc(name, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
		return errors.New("want PROVIDER/MODEL without spaces")
	}
	return nil
}

func evaluated(reg *benchmark.Registry) []string {
	var out []string
	for _, b := range reg.All() {
		if b.NewTask != nil {
			out = append(out, b.Name())
		}
	}
	return out
}

// MarshalBoard writes b as a board file that ParseBoard reads back to b
// (the demo writes its board this way). Judges are written per benchmark.
func MarshalBoard(b Board) ([]byte, error) {
	type bench struct {
		Dataset string            `yaml:"dataset"`
		Version string            `yaml:"version,omitempty"`
		Judges  map[string]string `yaml:"judges,omitempty"`
		Models  []string          `yaml:"models,flow,omitempty"`
	}
	type set struct {
		Temperature *float32 `yaml:"temperature,omitempty"`
		TopP        float32  `yaml:"top_p,omitempty"`
		MaxTokens   int      `yaml:"max_tokens,omitempty"`
		Seed        *int     `yaml:"seed,omitempty"`
		Limit       int64    `yaml:"limit,omitempty"`
		ShardSize   int      `yaml:"shard_size,omitempty"`
		Batch       bool     `yaml:"batch,omitempty"`
	}
	type acc struct {
		Groups       []string `yaml:"groups,flow,omitempty"`
		EmailDomains []string `yaml:"email_domains,flow,omitempty"`
		Tokens       []string `yaml:"tokens,flow,omitempty"`
		Anonymous    bool     `yaml:"anonymous,omitempty"`
	}
	type file struct {
		Name       string  `yaml:"name"`
		Title      string  `yaml:"title,omitempty"`
		Benchmarks []bench `yaml:"benchmarks"`
		Models     []any   `yaml:"models"`
		Settings   *set    `yaml:"settings,omitempty"`
		Access     *acc    `yaml:"access,omitempty"`
	}
	f := file{Name: b.Name, Title: b.Title}
	if a := b.Access; len(a.Groups)+len(a.EmailDomains)+len(a.Tokens) > 0 || a.Anonymous {
		f.Access = &acc{a.Groups, a.EmailDomains, a.Tokens, a.Anonymous}
	}
	for _, bm := range b.Benchmarks {
		f.Benchmarks = append(f.Benchmarks, bench(bm))
	}
	for _, m := range b.Models {
		if m.DisplayName == "" && m.Organisation == "" && m.Licence == "" && m.Parameters == "" && m.Link == "" && m.Batch == nil {
			f.Models = append(f.Models, m.Model)
			continue
		}
		f.Models = append(f.Models, modelMapping{Model: m.Model, DisplayName: m.DisplayName, Organisation: m.Organisation,
			Licence: m.Licence, Parameters: m.Parameters, Link: m.Link, Batch: m.Batch})
	}
	s := set{Temperature: b.Params.Temperature, TopP: b.Params.TopP, MaxTokens: b.Params.MaxTokens, Seed: b.Seed, Limit: b.Limit, ShardSize: b.ShardSize, Batch: b.Batch}
	if s != (set{}) {
		f.Settings = &s
	}
	return yaml.Marshal(f)
}
