package gateway

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/benchline/benchline/internal/modelapi"
)

// percentAll percent-encodes every byte of s, in upper or lower case hex.
func percentAll(s string, lower bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if lower {
			fmt.Fprintf(&b, "%%%02x", s[i])
		} else {
			fmt.Fprintf(&b, "%%%02X", s[i])
		}
	}
	return b.String()
}

// jsonAll escapes every rune of s as \uXXXX.
func jsonAll(s string) string {
	var b strings.Builder
	for _, r := range s {
		fmt.Fprintf(&b, `\u%04x`, r)
	}
	return b.String()
}

var (
	percentRE  = regexp.MustCompile(`%[0-9A-Fa-f]{2}`)
	jsonEscRE  = regexp.MustCompile(`\\u[0-9A-Fa-f]{4}`)
	base64Like = regexp.MustCompile(`[A-Za-z0-9+/_-]{8,}`)
)

// leak reports how text still holds key (or a 12-byte piece of it), found
// independently of the Redactor: text is percent-decoded (twice, for
// double encoding), JSON escapes are undone, and every run of base64
// characters is decoded at each alignment in both alphabets. It returns ""
// when there is no leak.
func leak(text, key string) string {
	piece := key
	if len(piece) > 12 {
		piece = key[len(key)-12:]
	}
	forms := []string{text}
	dec := text
	for range 2 {
		dec = percentRE.ReplaceAllStringFunc(dec, func(m string) string {
			n, _ := strconv.ParseUint(m[1:], 16, 8)
			return string([]byte{byte(n)})
		})
		forms = append(forms, dec)
	}
	unjson := jsonEscRE.ReplaceAllStringFunc(strings.ReplaceAll(dec, `\/`, `/`), func(m string) string {
		n, _ := strconv.ParseUint(m[2:], 16, 16)
		return string(rune(n))
	})
	forms = append(forms, unjson)
	for _, f := range forms {
		if strings.Contains(f, key) || strings.Contains(f, piece) {
			return "plain or escaped: " + f
		}
	}
	for _, f := range forms {
		for _, tok := range base64Like.FindAllString(f, -1) {
			for skip := range 4 {
				if skip >= len(tok) {
					break
				}
				t := tok[skip:]
				t = t[:len(t)/4*4]
				for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
					if b, err := enc.DecodeString(t); err == nil && bytes.Contains(b, []byte(piece)) {
						return "base64: " + tok
					}
				}
			}
		}
	}
	return ""
}

// TestEncodedKeyNeverLeaks plants two providers' keys and has the endpoint
// echo them, URL-, JSON- and base64-encoded, in error bodies of every kind
// (finding 8: a key echoed as sk%2D... reached the CLI error, the worker
// log and workflow history). Neither the returned error, the log, the
// Temporal error nor its failure as recorded in history may hold a key.
func TestEncodedKeyNeverLeaks(t *testing.T) {
	const key = "sk-PLANTED-8f14e45fceea167a5a36dedd4bea2543"
	const other = "sk-other/provider+key=c9f0f895fb98ab91"
	plants := []string{
		strings.ReplaceAll(key, "-", "%2D"), // the finding
		url.QueryEscape(other),
		percentAll(key, true),
		strings.ReplaceAll(url.QueryEscape(strings.ReplaceAll(key, "-", "%2D")), "%25", "%25"), // double-encoded
		jsonAll(key),
		strings.ReplaceAll(other, "/", `\/`),
		base64.StdEncoding.EncodeToString([]byte("user:" + key)),
		base64.RawURLEncoding.EncodeToString([]byte("xy" + key + "!")),
		url.QueryEscape(base64.StdEncoding.EncodeToString([]byte("Basic " + other + "\x00"))),
		key,
	}
	var n atomic.Int64
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)-1) % len(plants)
		p := plants[i]
		switch i % 5 {
		case 0:
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"error":{"message":"invalid header: %s","type":"invalid_request_error"}}`, p)
		case 1:
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, "upstream said: %s", p)
		case 2:
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"error":"bad key %s"}`, p)
		case 3:
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, `{"error":{"message":"overloaded","type":"%s"}}`, p)
		default:
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, `{"detail":"GET /v1/models?api_key=%s"}`, p)
		}
	}))
	defer hs.Close()
	var logs bytes.Buffer
	cfg := &Config{Providers: map[string]*Provider{
		"corp":  {BaseURL: hs.URL + "/v1", APIKeyEnv: "CORP_KEY"},
		"other": {BaseURL: hs.URL + "/v1", APIKeyEnv: "OTHER_KEY"},
	}}
	g, err := New(Options{Config: cfg, Env: mapEnv(map[string]string{"CORP_KEY": key, "OTHER_KEY": other}),
		Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	require.NoError(t, err)

	var seen []string
	for i := range plants {
		_, err := g.Complete(context.Background(), modelapi.Request{Model: "corp/m", Messages: userMsg("hi"), NoCache: true})
		require.Error(t, err, "reply %d", i)
		for _, te := range []error{ToTemporal(err), ToTemporalWrapped(fmt.Errorf("item %d: model corp/m: %w", i, err))} {
			f := temporal.GetDefaultFailureConverter().ErrorToFailure(te)
			hist, merr := protojson.Marshal(f)
			require.NoError(t, merr)
			seen = append(seen, te.Error(), string(hist))
		}
		var ge *Error
		require.ErrorAs(t, err, &ge)
		b, _ := json.Marshal(err)
		seen = append(seen, err.Error(), fmt.Sprintf("%+v %#v", err, err), ge.Reason(), string(b))
	}
	seen = append(seen, logs.String())
	for _, text := range seen {
		for _, k := range []string{key, other} {
			if where := leak(text, k); where != "" {
				t.Errorf("key %q leaked (%s) in:\n%s", k, where, text)
			}
		}
	}
	assert.Contains(t, strings.Join(seen, "\n"), redacted)
}

// TestRedactor checks each encoded form the Redactor documents, at every
// base64 alignment, and that text without a key is left alone.
func TestRedactor(t *testing.T) {
	const key = "sk-proj_Ab9+/=.*?[x]ÆØ-8f14e45fceea"
	const short = "k3y!"
	red := NewRedactor(key, short, "")
	type form struct {
		name string
		text string
	}
	forms := []form{
		{"plain", key},
		{"query escape", url.QueryEscape(key)},
		{"path escape", url.PathEscape(key)},
		{"every byte upper hex", percentAll(key, false)},
		{"every byte lower hex", percentAll(key, true)},
		{"one byte", strings.Replace(key, "-", "%2D", 1)},
		{"mixed case", strings.Replace(strings.Replace(key, "/", "%2f", 1), "+", "%2B", 1)},
		{"double encoded", url.QueryEscape(url.QueryEscape(key))},
		{"json marshal", func() string { b, _ := json.Marshal(key); return string(b[1 : len(b)-1]) }()},
		{"json every rune", jsonAll(key)},
		{"json upper hex", strings.ReplaceAll(strings.ToUpper(jsonAll(key)), `\U`, `\u`)},
		{"json slash", strings.ReplaceAll(key, "/", `\/`)},
		{"short plain", short},
		{"short query escape", url.QueryEscape(short)},
	}
	encs := map[string]*base64.Encoding{
		"std": base64.StdEncoding, "std raw": base64.RawStdEncoding,
		"url": base64.URLEncoding, "url raw": base64.RawURLEncoding,
	}
	for name, enc := range encs {
		for off := range 3 {
			for _, tail := range []string{"", "!", "!!", "tail bytes"} {
				data := strings.Repeat("p", off+3) + key + tail
				forms = append(forms, form{fmt.Sprintf("base64 %s offset %d tail %d", name, off, len(tail)), enc.EncodeToString([]byte(data))})
			}
			// The key at the very start of the data.
			forms = append(forms, form{fmt.Sprintf("base64 %s offset %d at start", name, off), enc.EncodeToString([]byte(key[:0] + strings.Repeat("q", off) + key))})
		}
		b64 := enc.EncodeToString([]byte("user:" + key))
		forms = append(forms,
			form{"base64 " + name + " url-encoded", url.QueryEscape(b64)},
			form{"base64 " + name + " json-escaped", strings.ReplaceAll(b64, "/", `\/`)})
	}
	for _, f := range forms {
		t.Run(f.name, func(t *testing.T) {
			text := `{"error":"echo ` + f.text + ` end"}`
			got := red.Redact(text)
			for _, k := range []string{key, short} {
				assert.Empty(t, leak(got, k), "%s leaked from %q as %q", k, text, got)
			}
			assert.Contains(t, got, redacted)
			assert.True(t, strings.HasPrefix(got, `{"error":"echo `) && strings.HasSuffix(got, ` end"}`), "text around the key is kept: %q", got)
		})
	}
	t.Run("no key", func(t *testing.T) {
		for _, s := range []string{"", "plain error text", "sk-proj_Ab9 is only a prefix", base64.StdEncoding.EncodeToString([]byte("something else entirely"))} {
			assert.Equal(t, s, red.Redact(s))
		}
	})
	t.Run("short key not in base64", func(t *testing.T) {
		// Documented: keys under minEncodedKey bytes are not looked for in base64.
		s := base64.StdEncoding.EncodeToString([]byte("xx" + short + "yy"))
		assert.Equal(t, s, red.Redact(s))
	})
	t.Run("no keys", func(t *testing.T) {
		assert.Equal(t, key, NewRedactor().Redact(key))
		var nilRed *Redactor
		assert.Equal(t, key, nilRed.Redact(key))
	})
	t.Run("cut after redaction", func(t *testing.T) {
		// A key straddling the cut must not leave its first half behind.
		s := strings.Repeat("x", 290) + url.QueryEscape(key) + strings.Repeat("y", 400)
		got := scrub(s, red, 300)
		assert.Empty(t, leak(got, key))
		assert.LessOrEqual(t, len(got), 300+len("…"))
		assert.Contains(t, got, "[REDA")
	})
}
