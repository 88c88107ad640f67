package wfclient

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/benchline/benchline/internal/baseline"
	"github.com/benchline/benchline/internal/config"
	"github.com/benchline/benchline/internal/gateway"
	"github.com/benchline/benchline/internal/judge"
	"github.com/benchline/benchline/internal/limits"
)

// ErrBadModel is wrapped by every error of ParseJudges and CheckModels: a
// model or judge name that no run could use.
var ErrBadModel = errors.New("bad model name")

// A ModelName is a model name as a user gave it, with the flag it came from
// for errors.
type ModelName struct {
	Flag  string // e.g. "--judge"
	Given string // the flag's value as given, e.g. "judge=baseline/first"
	Model string // <provider>/<model>
}

var roleRE = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// ParseJudges parses --judge values, each [ROLE=]PROVIDER/MODEL[,PROVIDER/MODEL...]
// (the role defaults to "judge"), into roles and models. A role is
// letters, digits, "_" and "-". Several models for one role, listed with
// commas or by repeating the role, form a panel: the role's value is the
// panel as judge.Panel reads it (sorted, repeats dropped), so the run id
// does not depend on the order the judges were listed in.
func ParseJudges(values []string) (map[string]string, []ModelName, error) {
	var judges map[string]string
	var names []ModelName
	for _, v := range values {
		role, list, ok := strings.Cut(v, "=")
		if !ok {
			role, list = "judge", v
		}
		if !roleRE.MatchString(role) {
			return nil, nil, fmt.Errorf("--judge %q: want [ROLE=]PROVIDER/MODEL, ROLE of letters, digits, _ and -: %w", v, ErrBadModel)
		}
		for _, model := range strings.Split(list, ",") {
			names = append(names, ModelName{Flag: "--judge", Given: v, Model: strings.TrimSpace(model)})
		}
		if judges == nil {
			judges = map[string]string{}
		}
		if prev := judges[role]; prev != "" {
			list = prev + "," + list
		}
		judges[role] = judge.NormalPanel(list)
	}
	return judges, names, nil
}

// CheckModels checks model names against the providers the configuration
// gives (the providers file, or the implicit openai and baseline), before a
// run starts: each must be PROVIDER/MODEL without spaces, its provider
// must be known, and where the provider's models are known (the built-in
// baseline provider's) the model must be one of them.
func CheckModels(cfg config.Config, names ...ModelName) error {
	providers, err := LoadProviders(cfg, "")
	if err != nil {
		return err
	}
	for _, n := range names {
		form := "PROVIDER/MODEL"
		if n.Flag == "--judge" {
			form = "[ROLE=]PROVIDER/MODEL"
		}
		if err := checkModel(providers, cfg.Models.ProvidersFile, n.Model, form); err != nil {
			return fmt.Errorf("%s %q: %w", n.Flag, n.Given, err)
		}
	}
	return nil
}

func checkModel(providers *gateway.Config, file, name, form string) error {
	pname, model, err := gateway.ParseModel(name)
	if err != nil || strings.IndexFunc(name, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
		return fmt.Errorf("want %s without spaces: %w", form, ErrBadModel)
	}
	p, ok := providers.Providers[pname]
	if !ok {
		where := "no providers file: set BENCHLINE_PROVIDERS or models.providers_file to add providers"
		if file != "" {
			where = "providers file " + file
		}
		return fmt.Errorf("unknown provider %q (known: %s; %s): %w", pname, strings.Join(providers.Names(), ", "), where, ErrBadModel)
	}
	if pname == gateway.BaselineProvider && p.Implicit {
		// The baseline's own error says which part of a parametric name
		// (noisy-<p>, user-<k>) is wrong, or lists every form it takes.
		if _, err := baseline.ParseModel(model); err != nil {
			return fmt.Errorf("%w: %w", err, ErrBadModel)
		}
	}
	return nil
}

// LoadProviders reads the providers the gateway would use: the providers
// file (or the environment alone) plus the implicit ones. baselineURL,
// when set, points the built-in baseline provider at an embedded server.
func LoadProviders(cfg config.Config, baselineURL string) (*gateway.Config, error) {
	var r io.Reader
	if cfg.Models.ProvidersFile != "" {
		f, err := os.Open(cfg.Models.ProvidersFile)
		if err != nil {
			return nil, fmt.Errorf("providers file: %w", err)
		}
		defer f.Close()
		b, err := limits.ReadFile(f, cfg.Models.ProvidersFile, limits.FileBytes)
		if err != nil {
			return nil, fmt.Errorf("providers file: %w", err)
		}
		r = bytes.NewReader(b)
	}
	env := gateway.Env(os.LookupEnv)
	if baselineURL != "" {
		env = gateway.WithBaselineURL(baselineURL, env)
	}
	gcfg, err := gateway.LoadConfig(r, env)
	if err != nil && cfg.Models.ProvidersFile != "" {
		return nil, fmt.Errorf("providers file %s: %w", cfg.Models.ProvidersFile, err)
	}
	return gcfg, err
}
