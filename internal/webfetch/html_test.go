package webfetch

import "testing"

func TestHTMLText(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"paragraphs and inline tags", "<p>The <b>dam</b> is 221 m high.</p><p>It opened in 1936.</p>",
			"The dam is 221 m high.\nIt opened in 1936."},
		{"script, style and svg dropped", "<head><title>Dam</title><style>p{color:red}</style></head>" +
			"<body><script>var x = '<p>no</p>';</script><svg><text>chart</text></svg>Body text</body>",
			"Dam\nBody text"},
		{"entities decoded", "<p>R&amp;D &lt;5% &mdash; caf&eacute;&nbsp;&nbsp;open</p>", "R&D <5% — café open"},
		{"list items and breaks", "<ul><li>one</li><li>two</li></ul>a<br>b", "one\ntwo\na\nb"},
		{"white space collapsed", "<div>\n  many \t  spaces\n\n\n</div>", "many spaces"},
		{"table cells", "<table><tr><th>year</th><th>MW</th></tr><tr><td>2020</td><td>5</td></tr></table>",
			"year\nMW\n2020\n5"},
		{"comments and doctype", "<!DOCTYPE html><!-- hidden --><p>shown</p>", "shown"},
		{"unclosed tags", "<p>open <i>italic", "open italic"},
		{"nested skipped elements", "<noscript><style>x</style>hidden</noscript>seen", "seen"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := HTMLText(tc.in); got != tc.want {
				t.Errorf("HTMLText(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
		})
	}
}
