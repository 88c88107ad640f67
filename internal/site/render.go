package site

import (
	"embed"
	"html/template"
	"strings"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets/*
var assetFS embed.FS

var templates = template.Must(template.New("site").Funcs(template.FuncMap{
	"num3":      num3,
	"maxStatic": func() int { return maxStatic },
	"ci":        ciText,
	"usd":       usd,
	"batchNote": func() string { return batchNote },
	"ms":        ms,
	"pval":      pval,
	"rank":      rankText,
	"stamp":     stampText,
	"join":      strings.Join,
	"slug":      slug,
	"f64":       f64,
	"deref":     func(p *float64) float64 { return *p },
	"add":       func(a, b int64) int64 { return a + b },
	"signed": func(x float64) string {
		s := num3(x)
		if x > 0 {
			return "+" + s
		}
		return s
	},
}).ParseFS(templateFS, "templates/*.html"))

func mustAsset(name string) []byte {
	b, err := assetFS.ReadFile("assets/" + name)
	if err != nil {
		panic("site: missing asset " + name)
	}
	return b
}
