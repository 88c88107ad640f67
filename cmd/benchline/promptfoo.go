package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/benchline/benchline/internal/gateway"

	"github.com/benchline/benchline/scorers/promptfoo"
)

// promptfooModels names the benchline model of each of the config's
// providers: openai:chat:MODEL with config.apiBaseUrl is MODEL at the
// providers file's provider whose base_url equals the apiBaseUrl (a
// trailing slash aside). A provider no entry serves is returned in
// missing, said as what to add.
func promptfooModels(cfg *promptfoo.Config, g *gateway.Config) (models, missing []string) {
	norm := func(u string) string { return strings.TrimRight(u, "/") }
	names := make([]string, 0, len(g.Providers))
	for n := range g.Providers {
		names = append(names, n)
	}
	sort.Strings(names)
	for i, p := range cfg.Providers {
		found := ""
		for _, n := range names {
			if p.BaseURL != "" && norm(g.Providers[n].BaseURL) == norm(p.BaseURL) {
				found = n
				break
			}
		}
		if found == "" {
			missing = append(missing, fmt.Sprintf("providers[%d] (%s): no provider in the providers file has base_url %s; add one to evaluate it", i, p.ID, p.BaseURL))
			continue
		}
		models = append(models, found+"/"+p.Model)
	}
	return models, missing
}
