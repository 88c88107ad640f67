// Package site writes a board stamp's static site.
//
// TEMPORARY: a minimal stand-in for branch `site`, with the same API, so
// that the board branch builds and is tested before it lands. The lead
// replaces this file at merge. It writes index.html, a plain HTML table of
// the cells.
package site

import (
	"context"
	"fmt"
	"html/template"
	"strings"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/leaderboard"
)

var page = template.Must(template.New("index").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>{{.Board}} {{.Stamp}}</title></head>
<body><h1>{{.Board}}</h1><p>stamp {{.Stamp}}</p>
<table>
<tr><th>dataset</th><th>version</th><th>model</th><th>metric</th><th>mean</th><th>95% CI</th><th>n</th><th>run</th></tr>
{{range .Cells}}<tr><td>{{.Dataset}}</td><td>{{.Version}}</td><td>{{.Model}}</td><td>{{.Metric}}</td><td>{{printf "%.4f" .Mean}}</td><td>[{{printf "%.4f" .CILow}}, {{printf "%.4f" .CIHigh}}]</td><td>{{.N}}</td><td>{{.RunID}}</td></tr>
{{end}}</table>
</body></html>
`))

// Write writes the stamp's site under leaderboard.SiteKey(s.Board, s.Stamp).
func Write(ctx context.Context, store blob.Store, s leaderboard.Scores) error {
	var b strings.Builder
	if err := page.Execute(&b, s); err != nil {
		return fmt.Errorf("site: %w", err)
	}
	if err := blob.PutBytes(ctx, store, leaderboard.SiteKey(s.Board, s.Stamp)+"/index.html", []byte(b.String())); err != nil {
		return fmt.Errorf("site: %w", err)
	}
	return nil
}
