package gateway

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// maxRedirects bounds the redirects within a provider's origin one
// request follows (net/http's own bound is 10).
const maxRedirects = 10

// origin is a URL's scheme, host and port: where a request goes.
type origin struct{ scheme, host, port string }

// originOf is u's origin, the host in lower case and the scheme's default
// port made explicit, so https://h and https://h:443 are one origin.
func originOf(u *url.URL) origin {
	o := origin{scheme: strings.ToLower(u.Scheme), host: strings.ToLower(u.Hostname()), port: u.Port()}
	if o.port == "" {
		switch o.scheme {
		case "http":
			o.port = "80"
		case "https":
			o.port = "443"
		}
	}
	return o
}

// String is the origin as a URL without credentials, path or query (and
// without the scheme's default port).
func (o origin) String() string {
	if o.scheme == "http" && o.port == "80" || o.scheme == "https" && o.port == "443" {
		if strings.Contains(o.host, ":") {
			return o.scheme + "://[" + o.host + "]"
		}
		return o.scheme + "://" + o.host
	}
	return o.scheme + "://" + net.JoinHostPort(o.host, o.port)
}

// redirectError is a redirect the provider's client refused: to another
// origin than the request's, or one too many. Its text names the provider
// and the origins only, never a path, a query or credentials.
type redirectError struct {
	provider string
	from, to origin // the request's origin and the redirect's
	tooMany  bool
}

func (e *redirectError) Error() string {
	if e.tooMany {
		return fmt.Sprintf("provider %q answered with more than %d redirects within %s: refused", e.provider, maxRedirects, e.from)
	}
	return fmt.Sprintf("provider %q redirected the request to %s, another origin than %s (scheme, host or port differ): "+
		"refused, the API key never leaves the provider's origin; if the provider has moved, set its base_url (or reward_url) to the new address",
		e.provider, e.to, e.from)
}

// checkRedirect is the CheckRedirect of provider's HTTP client: it follows
// a redirect only within the origin of the request the gateway made (the
// provider's base_url or reward_url), at most maxRedirects times. So a
// provider's key and a request's body never go to another origin, and an
// answer from elsewhere is never scored.
func checkRedirect(provider string) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		e := &redirectError{provider: provider, from: originOf(via[0].URL), to: originOf(req.URL)}
		if e.to != e.from {
			return e
		}
		if len(via) > maxRedirects {
			e.tooMany = true
			return e
		}
		return nil
	}
}
