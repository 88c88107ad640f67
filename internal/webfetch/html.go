package webfetch

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// skipped are the elements whose content is not text a reader sees.
var skipped = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true,
	atom.Svg: true, atom.Math: true, atom.Iframe: true, atom.Object: true, atom.Canvas: true,
}

// blocks are the elements that start and end a line of text.
var blocks = map[atom.Atom]bool{
	atom.Address: true, atom.Article: true, atom.Aside: true, atom.Blockquote: true, atom.Br: true,
	atom.Dd: true, atom.Details: true, atom.Div: true, atom.Dl: true, atom.Dt: true,
	atom.Figcaption: true, atom.Figure: true, atom.Footer: true, atom.Form: true,
	atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true, atom.H5: true, atom.H6: true,
	atom.Header: true, atom.Hr: true, atom.Li: true, atom.Main: true, atom.Nav: true, atom.Ol: true,
	atom.P: true, atom.Pre: true, atom.Section: true, atom.Summary: true, atom.Table: true,
	atom.Td: true, atom.Th: true, atom.Title: true, atom.Tr: true, atom.Ul: true,
}

// HTMLText reduces an HTML document to its readable text with
// golang.org/x/net/html's tokenizer: the text of every element but script,
// style, noscript, template, svg, math, iframe, object and canvas, with
// entities decoded; block elements (p, div, li, h1–h6, tr, td, br, …)
// break lines; runs of white space become one space, lines are
// trimmed, and blank lines are dropped. Malformed HTML is read as far as
// the tokenizer can.
func HTMLText(doc string) string {
	z := html.NewTokenizer(strings.NewReader(doc))
	var b strings.Builder
	depth := 0 // inside skipped elements
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return tidy(b.String())
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			switch {
			case skipped[a] && tt == html.StartTagToken:
				depth++
			case skipped[a] && tt == html.EndTagToken:
				depth = max(0, depth-1)
			case blocks[a]:
				b.WriteByte('\n')
			}
		case html.TextToken:
			if depth == 0 {
				b.Write(z.Text())
			}
		}
	}
}

// tidy collapses white space, trims each line and drops blank lines.
func tidy(s string) string {
	var lines []string
	for line := range strings.Lines(s) {
		if f := strings.Fields(line); len(f) > 0 {
			lines = append(lines, strings.Join(f, " "))
		}
	}
	return strings.Join(lines, "\n")
}
