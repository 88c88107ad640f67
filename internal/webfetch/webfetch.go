// Package webfetch fetches the web pages that benchmark reports cite, for
// checking claims against their sources (ReportEval's factuality), with
// the results cached in the object store.
//
// A fetch is bounded: a timeout over the whole fetch, a body size limit,
// a content-type allowlist (text/*, markdown and HTML, the HTML reduced to
// its text), at most MaxRedirects redirects, each hop checked again. No
// private, loopback, link-local or unspecified address is dialled unless
// the Config allows its host or its range: the check runs on the address
// actually dialled (a net.Dialer Control func), after name resolution, so
// a name that resolves to a public address when asked and to a private one
// when dialled (DNS rebinding) is still refused. Proxies from the
// environment are not used, since the check would then judge the proxy.
//
// Without a route to the network a fetch fails fast: connecting is bounded
// by ConnectTimeout (5 s), DNS and connection errors are unreachable at
// once, a host that could not be reached is not tried again for NoRouteFor,
// and after NoRouteAfter fetches in a row that could not connect nothing is
// tried for NoRouteFor; at most MaxConcurrent fetches are on the network at
// once. An Offline fetcher (BENCHLINE_WEB_OFFLINE=1 on a worker) tries
// nothing: a source not in the cache is "offline" (unverifiable).
//
// A fetch that does not give the page is a Result with a status saying
// why (not_found, timeout, unreachable, …), never an error: an
// unreachable source is recorded as unreachable, never as a claim it does
// not support. Errors are for the caller's cancellation and for the
// object store.
//
// Results are cached under CachePrefix + sha256(Canonical(url)) + ".json":
// pages fetched and definitive failures (not_found, bad_content_type, other
// 4xx answers but 408 and 429), each with its status and fetch time.
// Timeouts, unreachable hosts, 5xx answers and the outcomes that depend on
// the configuration (too_large, refused_private, too many redirects) are
// not cached, so a later fetch tries again. The first writer of an entry
// wins (PutIfAbsent), so concurrent workers agree on a source's text.
package webfetch

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/net/html/charset"

	"github.com/benchline/benchline/internal/blob"
)

// Status says how a fetch ended.
type Status string

// The statuses of a Result.
const (
	// OK: the page was fetched; Result.Text is its text.
	OK Status = "ok"
	// NotFound: the server answered 404 or 410.
	NotFound Status = "not_found"
	// HTTPError: another answer than 2xx, 404 or 410 (HTTPStatus says
	// which), or more redirects than allowed.
	HTTPError Status = "http_error"
	// Timeout: no complete answer within Config.Timeout.
	Timeout Status = "timeout"
	// RefusedPrivate: the URL or a redirect led to an address the
	// configuration does not allow.
	RefusedPrivate Status = "refused_private"
	// TooLarge: the body is over Config.MaxBytes.
	TooLarge Status = "too_large"
	// BadContentType: the body is not text, markdown or HTML.
	BadContentType Status = "bad_content_type"
	// Unreachable: no answer (unknown host, connection refused or reset,
	// TLS failure, no route: see Config.NoRouteAfter) or a URL that cannot
	// be fetched (not http(s)).
	Unreachable Status = "unreachable"
	// Offline: the fetcher is offline (Config.Offline) and the source is
	// not in the cache: unverifiable, not tried.
	Offline Status = "offline"
)

// A Result is the outcome of fetching one URL.
type Result struct {
	// URL is the URL asked for, in Canonical form.
	URL string `json:"url"`
	// FinalURL is where the fetch ended: the last redirect followed, or
	// the hop that was refused.
	FinalURL string `json:"final_url"`
	Status   Status `json:"status"`
	// HTTPStatus is the last answer's status code; 0 when there was none.
	HTTPStatus int `json:"http_status,omitempty"`
	// ContentType is the answer's media type.
	ContentType string `json:"content_type,omitempty"`
	// Text is the page's text (HTML reduced to text, other types as
	// sent, decoded to UTF-8); empty unless Status is OK.
	Text string `json:"text,omitempty"`
	// Reason says in words why the status is not OK.
	Reason string `json:"reason,omitempty"`
	// FetchedAt is when the page was fetched (for a cached result, when it
	// was first fetched).
	FetchedAt time.Time `json:"fetched_at"`
	// Cached is true when the result came from the cache.
	Cached bool `json:"-"`
	// noConnect is true when the fetch failed before any connection:
	// a DNS error, a refused or unroutable connection, a connect time-out.
	noConnect bool
}

// cacheable reports whether r is definitive and independent of the
// configuration, so worth keeping.
func (r Result) cacheable() bool {
	switch r.Status {
	case OK, NotFound, BadContentType:
		return true
	case HTTPError:
		return r.HTTPStatus >= 400 && r.HTTPStatus < 500 &&
			r.HTTPStatus != http.StatusRequestTimeout && r.HTTPStatus != http.StatusTooManyRequests
	}
	return false
}

// A Fetcher fetches URLs with a Config and caches the results in a store.
// It is safe for concurrent use.
type Fetcher struct {
	cfg    Config
	store  blob.Store
	client *http.Client
	now    func() time.Time // the clock; a field so tests can move it
	sem    chan struct{}    // Config.MaxConcurrent slots

	mu         sync.Mutex
	failsInRow int                  // fetches in a row that could not connect
	noRoute    time.Time            // until when nothing is tried
	deadHosts  map[string]time.Time // host -> until when it is not tried
}

// New returns a Fetcher caching in store, or an error wrapping ErrConfig.
func New(store blob.Store, cfg Config) (*Fetcher, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	f := &Fetcher{cfg: cfg, store: store, now: time.Now, sem: make(chan struct{}, cfg.MaxConcurrent), deadHosts: map[string]time.Time{}}
	tr := &http.Transport{
		Proxy:                 nil, // the address check must see the server, not a proxy
		DialContext:           f.dial,
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   cfg.Timeout,
		ResponseHeaderTimeout: cfg.Timeout,
		MaxIdleConns:          32,
		IdleConnTimeout:       30 * time.Second,
	}
	f.client = &http.Client{Transport: tr, CheckRedirect: f.checkRedirect}
	return f, nil
}

// CacheKey is where the result for url is cached: CachePrefix, the hex
// sha256 of the canonical URL, ".json".
func (f *Fetcher) CacheKey(canonical string) string {
	sum := sha256.Sum256([]byte(canonical))
	return f.cfg.CachePrefix + hex.EncodeToString(sum[:]) + ".json"
}

// Canonical returns the form of an http(s) URL that Fetch asks for and
// caches under: scheme and host in lower case, the scheme's default port
// and the fragment dropped, an empty path written "/". A URL that is not
// absolute http(s), has no host or carries credentials is an error.
// ReportEval's cited URLs are first normalised as the original does
// (scorers/reporteval.NormalizeURL).
func Canonical(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", fmt.Errorf("webfetch: not a URL: %w", err)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("webfetch: %q is not an http(s) URL", raw)
	}
	if u.User != nil {
		return "", fmt.Errorf("webfetch: %q carries credentials", raw)
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if host == "" {
		return "", fmt.Errorf("webfetch: %q has no host", raw)
	}
	if (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	u.Host = host
	if port != "" {
		u.Host += ":" + port
	}
	u.Fragment, u.RawFragment = "", ""
	if u.Path == "" && u.RawPath == "" {
		u.Path = "/"
	}
	return u.String(), nil
}

// Fetch returns the page at rawURL, from the cache when a fresh entry is
// there (see the package comment for what is cached, and Config.MaxAge).
// Every way a fetch can fail is a Result status; the error is for a
// cancelled ctx and for the store.
func (f *Fetcher) Fetch(ctx context.Context, rawURL string) (Result, error) {
	canonical, err := Canonical(rawURL)
	if err != nil {
		return Result{URL: rawURL, FinalURL: rawURL, Status: Unreachable, Reason: err.Error(), FetchedAt: f.now().UTC()}, nil
	}
	key := f.CacheKey(canonical)
	var cached Result
	err = blob.GetJSON(ctx, f.store, key, &cached)
	stale := err == nil
	switch {
	case err == nil && (f.cfg.MaxAge == 0 || f.now().Sub(cached.FetchedAt) <= f.cfg.MaxAge):
		cached.Cached = true
		return cached, nil
	case err != nil && !errors.Is(err, blob.ErrNotFound):
		return Result{}, fmt.Errorf("webfetch: read cache for %s: %w", canonical, err)
	}
	if f.cfg.Offline {
		return f.untried(canonical, Offline, "unverifiable (offline): fetching is off (BENCHLINE_WEB_OFFLINE)"), nil
	}
	if why := f.skip(canonical); why != "" {
		return f.untried(canonical, Unreachable, why), nil
	}
	select {
	case f.sem <- struct{}{}:
	case <-ctx.Done():
		return Result{}, fmt.Errorf("webfetch: fetch %s: %w", canonical, ctx.Err())
	}
	if why := f.skip(canonical); why != "" { // the breaker may have tripped while this waited
		<-f.sem
		return f.untried(canonical, Unreachable, why), nil
	}
	res, err := f.get(ctx, canonical)
	<-f.sem
	if err != nil {
		return Result{}, err
	}
	f.note(canonical, res)
	if !res.cacheable() {
		return res, nil
	}
	b, err := json.Marshal(res)
	if err != nil {
		return Result{}, fmt.Errorf("webfetch: encode result for %s: %w", canonical, err)
	}
	if stale {
		err = blob.PutBytes(ctx, f.store, key, b)
	} else {
		err = f.store.PutIfAbsent(ctx, key, bytes.NewReader(b), int64(len(b)))
	}
	if errors.Is(err, blob.ErrExists) {
		// Another fetcher got there first: use its result, so every
		// verdict on this source sees the same text.
		if err := blob.GetJSON(ctx, f.store, key, &cached); err != nil {
			return Result{}, fmt.Errorf("webfetch: read cache for %s: %w", canonical, err)
		}
		cached.Cached = true
		return cached, nil
	}
	if err != nil {
		return Result{}, fmt.Errorf("webfetch: cache result for %s: %w", canonical, err)
	}
	return res, nil
}

// untried is the result of a fetch of u that was not tried.
func (f *Fetcher) untried(u string, st Status, why string) Result {
	return Result{URL: u, FinalURL: u, Status: st, Reason: why, FetchedAt: f.now().UTC()}
}

// skip says why u is not tried (no route to the network, or its host
// failed to connect lately), or "".
func (f *Fetcher) skip(u string) string {
	now := f.now()
	host := hostOf(u)
	f.mu.Lock()
	defer f.mu.Unlock()
	if now.Before(f.noRoute) {
		return fmt.Sprintf("no route: the last %d fetches could not connect; not tried until %s", f.cfg.NoRouteAfter, f.noRoute.UTC().Format(time.RFC3339))
	}
	if until, ok := f.deadHosts[host]; ok && now.Before(until) {
		return fmt.Sprintf("host %s could not be reached lately; not tried until %s", host, until.UTC().Format(time.RFC3339))
	}
	return ""
}

// note counts a fetch for the no-route breaker: a fetch that could not
// connect (res.connectFailed) adds one and marks its host; any answer
// resets the count.
func (f *Fetcher) note(u string, res Result) {
	now := f.now()
	f.mu.Lock()
	defer f.mu.Unlock()
	if !res.noConnect {
		if res.Status != Unreachable && res.Status != Timeout {
			f.failsInRow = 0
		}
		return
	}
	f.deadHosts[hostOf(u)] = now.Add(f.cfg.NoRouteFor)
	if len(f.deadHosts) > 10_000 { // bounded: forget them all rather than grow
		f.deadHosts = map[string]time.Time{}
	}
	f.failsInRow++
	if f.failsInRow >= f.cfg.NoRouteAfter {
		f.noRoute = now.Add(f.cfg.NoRouteFor)
		f.failsInRow = 0
	}
}

func hostOf(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	return strings.ToLower(p.Hostname())
}

// hops records the redirects of one fetch.
type hops struct{ last string }

type hopsKey struct{}

// errTimedOut is the cause of a fetch's own deadline, told apart from the
// caller's.
var errTimedOut = errors.New("webfetch: timed out")

// errTooManyRedirects and errRedirectScheme stop a redirect chain.
var (
	errTooManyRedirects = errors.New("webfetch: too many redirects")
	errRedirectScheme   = errors.New("webfetch: redirect to a URL that is not http(s)")
)

// get fetches u (canonical) over the network.
func (f *Fetcher) get(ctx context.Context, u string) (Result, error) {
	h := &hops{last: u}
	fctx, cancel := context.WithTimeoutCause(ctx, f.cfg.Timeout, errTimedOut)
	defer cancel()
	fctx = context.WithValue(fctx, hopsKey{}, h)
	res := Result{URL: u, FinalURL: u, FetchedAt: f.now().UTC()}
	req, err := http.NewRequestWithContext(fctx, http.MethodGet, u, nil)
	if err != nil {
		res.Status, res.Reason = Unreachable, err.Error()
		return res, nil
	}
	req.Header.Set("User-Agent", f.cfg.UserAgent)
	req.Header.Set("Accept", "text/html, text/markdown, text/plain;q=0.9, text/*;q=0.8")
	resp, err := f.client.Do(req)
	if err != nil {
		res.FinalURL = h.last
		return f.failed(ctx, fctx, res, err)
	}
	defer resp.Body.Close()
	res.FinalURL = resp.Request.URL.String()
	res.HTTPStatus = resp.StatusCode
	switch {
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		res.Status, res.Reason = NotFound, resp.Status
		return res, nil
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		res.Status, res.Reason = HTTPError, resp.Status
		return res, nil
	}
	ct := resp.Header.Get("Content-Type")
	if ct != "" {
		if res, ok := f.checkType(res, ct); !ok {
			return res, nil
		}
	}
	if resp.ContentLength > f.cfg.MaxBytes {
		res.Status, res.Reason = TooLarge, fmt.Sprintf("Content-Length %d is over the limit of %d bytes", resp.ContentLength, f.cfg.MaxBytes)
		return res, nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, f.cfg.MaxBytes+1))
	if err != nil {
		return f.failed(ctx, fctx, res, err)
	}
	if int64(len(body)) > f.cfg.MaxBytes {
		res.Status, res.Reason = TooLarge, fmt.Sprintf("the body is over the limit of %d bytes", f.cfg.MaxBytes)
		return res, nil
	}
	if ct == "" {
		ct = http.DetectContentType(body)
		if r, ok := f.checkType(res, ct); !ok {
			r.Reason += " (sniffed: the server sent no Content-Type)"
			return r, nil
		}
	}
	text, err := decode(body, ct)
	if err != nil {
		res.Status, res.Reason = BadContentType, err.Error()
		return res, nil
	}
	res.ContentType = mediaType(ct)
	res.Status, res.Text = OK, text
	return res, nil
}

// mediaType returns the lower-case media type of a Content-Type value.
func mediaType(ct string) string {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return strings.ToLower(strings.TrimSpace(strings.SplitN(ct, ";", 2)[0]))
	}
	return mt
}

// checkType sets res to bad_content_type unless ct is allowed: text/*,
// application/xhtml+xml, application/markdown or application/x-markdown.
func (f *Fetcher) checkType(res Result, ct string) (Result, bool) {
	mt := mediaType(ct)
	res.ContentType = mt
	switch {
	case strings.HasPrefix(mt, "text/"), mt == "application/xhtml+xml", mt == "application/markdown", mt == "application/x-markdown":
		return res, true
	}
	res.Status, res.Reason = BadContentType, fmt.Sprintf("content type %q is not text, markdown or HTML", mt)
	return res, false
}

// decode converts body to UTF-8 text by its charset (the Content-Type's,
// else a <meta> declaration or a byte-order mark, else UTF-8), then reduces
// HTML to its text. Bytes that are not valid in the charset become U+FFFD.
func decode(body []byte, ct string) (string, error) {
	r, err := charset.NewReader(bytes.NewReader(body), ct)
	if err != nil {
		return "", fmt.Errorf("cannot decode the text: %w", err)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return "", fmt.Errorf("cannot decode the text: %w", err)
	}
	text := strings.ToValidUTF8(string(b), "\uFFFD")
	switch mediaType(ct) {
	case "text/html", "application/xhtml+xml":
		return HTMLText(text), nil
	}
	return text, nil
}

// failed turns a failed request into a Result; only the caller's
// cancellation is an error.
func (f *Fetcher) failed(ctx, fctx context.Context, res Result, err error) (Result, error) {
	var refused *refusedError
	var ne net.Error
	switch {
	case ctx.Err() != nil:
		return Result{}, fmt.Errorf("webfetch: fetch %s: %w", res.URL, ctx.Err())
	case errors.As(err, &refused):
		res.Status, res.Reason = RefusedPrivate, refused.Error()
	case context.Cause(fctx) == errTimedOut || errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		res.Status, res.Reason = Timeout, fmt.Sprintf("no complete answer within %s", f.cfg.Timeout)
	case errors.Is(err, errTooManyRedirects):
		res.Status, res.Reason = HTTPError, fmt.Sprintf("stopped after %d redirects", f.cfg.MaxRedirects)
	default:
		res.Status, res.Reason = Unreachable, err.Error()
	}
	var oe *net.OpError
	var de *net.DNSError
	if refused == nil && (errors.As(err, &de) || (errors.As(err, &oe) && oe.Op == "dial")) {
		res.noConnect = true
		if res.Status == Timeout {
			res.Status, res.Reason = Unreachable, fmt.Sprintf("could not connect within %s: %v", f.cfg.ConnectTimeout, err)
		}
	}
	res.HTTPStatus = 0
	return res, nil
}

// checkRedirect bounds a redirect chain and checks each hop's scheme; the
// dialer checks each hop's address.
func (f *Fetcher) checkRedirect(req *http.Request, via []*http.Request) error {
	if h, ok := req.Context().Value(hopsKey{}).(*hops); ok {
		h.last = req.URL.String()
	}
	if len(via) > f.cfg.MaxRedirects {
		return errTooManyRedirects
	}
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return errRedirectScheme
	}
	return nil
}

// dial connects to addr ("host:port"), or to the Resolve entry of its host,
// refusing forbidden addresses unless the host or the address is allowed.
// The check is in the dialer's Control func, so it sees every address
// actually connected to, after resolution.
func (f *Fetcher) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host := splitHost(addr)
	if to, ok := f.cfg.Resolve[strings.ToLower(host)]; ok {
		addr = to
	}
	anyAddr := f.cfg.hostAllowed(host)
	d := net.Dialer{
		Timeout: f.cfg.ConnectTimeout,
		Control: func(_, address string, _ syscall.RawConn) error {
			if anyAddr {
				return nil
			}
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return &refusedError{host: host, why: "not an IP address (" + address + ")"}
			}
			a := ap.Addr().Unmap()
			if why := Forbidden(a); why != "" && !f.cfg.addrAllowed(a) {
				return &refusedError{host: host, addr: a, why: why}
			}
			return nil
		},
	}
	return d.DialContext(ctx, network, addr)
}
