package webfetch

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"
)

// Defaults of Config.
const (
	DefaultTimeout      = 20 * time.Second
	DefaultMaxBytes     = 2 << 20
	DefaultMaxRedirects = 5
	DefaultCachePrefix  = "cache/sources/"
	DefaultUserAgent    = "benchline-webfetch/1 (source checker for LLM benchmark reports)"
	// DefaultConnectTimeout bounds connecting to a source (DNS, TCP).
	DefaultConnectTimeout = 5 * time.Second
	// DefaultNoRouteAfter and DefaultNoRouteFor: after this many fetches
	// in a row that could not connect (none succeeding in between), the
	// fetcher stops trying for DefaultNoRouteFor.
	DefaultNoRouteAfter = 8
	DefaultNoRouteFor   = time.Minute
	// DefaultMaxConcurrent bounds the fetches on the network at once.
	DefaultMaxConcurrent = 16
)

// MaxRedirects is the bound on Config.MaxRedirects: no configuration
// follows more redirects than this.
const MaxRedirects = 5

// ErrConfig is wrapped by New's error when a Config breaks a rule.
var ErrConfig = errors.New("webfetch: invalid config")

// Config says how a Fetcher fetches. The zero value is usable: every
// field left zero takes its default, and no private, loopback, link-local
// or unspecified address is dialled.
type Config struct {
	// Timeout bounds one fetch, redirects and body included
	// (DefaultTimeout, 20s).
	Timeout time.Duration
	// MaxBytes bounds the body read, after any transfer decompression
	// (DefaultMaxBytes, 2 MiB); a larger body is too_large.
	MaxBytes int64
	// MaxRedirects is how many redirects are followed, 1 to MaxRedirects
	// (DefaultMaxRedirects, 5, when zero).
	MaxRedirects int
	// AllowHosts are host names (matched exactly, case-insensitively,
	// without the port) that may be dialled whatever address they resolve
	// to, e.g. "sources.benchline.test" for the fixture source server.
	AllowHosts []string
	// AllowNets are address ranges that may be dialled although they are
	// private, loopback or link-local, e.g. 127.0.0.1/32 for a local test
	// server.
	AllowNets []netip.Prefix
	// Resolve maps a host name to the "ip:port" address dialled instead of
	// resolving it (curl's --resolve): the URL, the Host header and the
	// cache key are unchanged. It is how tests and the demo point the
	// fixtures' sources.benchline.test at a local server; the dialled
	// address is still checked (allow the host in AllowHosts).
	Resolve map[string]string
	// CachePrefix is where results are cached in the store
	// (DefaultCachePrefix, "cache/sources/").
	CachePrefix string
	// MaxAge is how long a cached result is used; zero uses it forever
	// (the sources of a benchmark run stay fixed).
	MaxAge time.Duration
	// UserAgent is sent with every request (DefaultUserAgent).
	UserAgent string
	// ConnectTimeout bounds resolving and connecting to a host
	// (DefaultConnectTimeout, 5s): a host with no route fails in this
	// time, not the whole Timeout.
	ConnectTimeout time.Duration
	// NoRouteAfter and NoRouteFor stop a fetcher with no route to the
	// network from paying a connect time-out per source: after NoRouteAfter
	// fetches in a row that failed to connect (DNS or connection errors,
	// connect time-outs; DefaultNoRouteAfter, 8), every fetch for the next
	// NoRouteFor (DefaultNoRouteFor, 1 min) is unreachable at once, without
	// trying; a host that failed to connect is not tried again for
	// NoRouteFor either. A fetch that connects resets the count.
	NoRouteAfter int
	NoRouteFor   time.Duration
	// MaxConcurrent bounds the fetches on the network at once
	// (DefaultMaxConcurrent, 16); cached results are not counted.
	MaxConcurrent int
	// Offline fetches nothing: a source not in the cache is Offline
	// ("unverifiable (offline)") at once. Workers set it from
	// BENCHLINE_WEB_OFFLINE=1.
	Offline bool
}

// withDefaults checks c and fills in its defaults.
func (c Config) withDefaults() (Config, error) {
	bad := func(format string, args ...any) (Config, error) {
		return c, fmt.Errorf("%w: %s", ErrConfig, fmt.Sprintf(format, args...))
	}
	switch {
	case c.Timeout < 0:
		return bad("timeout %s is negative", c.Timeout)
	case c.MaxBytes < 0:
		return bad("max bytes %d is negative", c.MaxBytes)
	case c.MaxRedirects < 0 || c.MaxRedirects > MaxRedirects:
		return bad("max redirects %d is outside 1..%d (0 for the default)", c.MaxRedirects, MaxRedirects)
	case c.MaxAge < 0:
		return bad("max age %s is negative", c.MaxAge)
	case c.ConnectTimeout < 0 || c.NoRouteAfter < 0 || c.NoRouteFor < 0 || c.MaxConcurrent < 0:
		return bad("connect timeout, no-route settings and max concurrent must not be negative")
	}
	c.ConnectTimeout = cmp.Or(c.ConnectTimeout, DefaultConnectTimeout)
	c.NoRouteAfter = cmp.Or(c.NoRouteAfter, DefaultNoRouteAfter)
	c.NoRouteFor = cmp.Or(c.NoRouteFor, DefaultNoRouteFor)
	c.MaxConcurrent = cmp.Or(c.MaxConcurrent, DefaultMaxConcurrent)
	c.Timeout = cmp.Or(c.Timeout, DefaultTimeout)
	c.MaxBytes = cmp.Or(c.MaxBytes, DefaultMaxBytes)
	c.MaxRedirects = cmp.Or(c.MaxRedirects, DefaultMaxRedirects)
	c.CachePrefix = cmp.Or(c.CachePrefix, DefaultCachePrefix)
	c.UserAgent = cmp.Or(c.UserAgent, DefaultUserAgent)
	for _, p := range c.AllowNets {
		if !p.IsValid() {
			return bad("allowed network %v is not a valid prefix", p)
		}
	}
	hosts := make([]string, len(c.AllowHosts))
	for i, h := range c.AllowHosts {
		if h == "" || strings.ContainsAny(h, ":/ ") {
			return bad("allowed host %q is not a host name", h)
		}
		hosts[i] = strings.ToLower(h)
	}
	c.AllowHosts = hosts
	resolve := make(map[string]string, len(c.Resolve))
	for h, addr := range c.Resolve {
		ap, err := netip.ParseAddrPort(addr)
		if err != nil {
			return bad("resolve %s: %q is not an ip:port address: %v", h, addr, err)
		}
		resolve[strings.ToLower(h)] = ap.String()
	}
	c.Resolve = resolve
	return c, nil
}

// hostAllowed reports whether host may be dialled at any address.
func (c Config) hostAllowed(host string) bool {
	host = strings.ToLower(host)
	for _, h := range c.AllowHosts {
		if h == host {
			return true
		}
	}
	return false
}

// addrAllowed reports whether a is in one of AllowNets.
func (c Config) addrAllowed(a netip.Addr) bool {
	for _, p := range c.AllowNets {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

var (
	sharedSpace = netip.MustParsePrefix("100.64.0.0/10") // RFC 6598 carrier-grade NAT
	thisNetwork = netip.MustParsePrefix("0.0.0.0/8")     // RFC 791 "this network"
)

// Forbidden says why a is not dialled unless allowed: it is private
// (10/8, 172.16/12, 192.168/16, fc00::/7), loopback (127/8, ::1),
// link-local (169.254/16, where cloud metadata services answer, and
// fe80::/10, unicast or multicast), unspecified (0.0.0.0, ::), in 0/8,
// shared address space (100.64/10) or multicast. IPv4-mapped IPv6
// addresses are judged as their IPv4 address. It returns "" for a
// public address.
func Forbidden(a netip.Addr) string {
	a = a.Unmap()
	switch {
	case !a.IsValid():
		return "an invalid address"
	case a.IsLoopback():
		return "a loopback address"
	case a.IsPrivate():
		return "a private address"
	case a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast():
		return "a link-local address"
	case a.IsUnspecified():
		return "the unspecified address"
	case thisNetwork.Contains(a):
		return `a "this network" address`
	case sharedSpace.Contains(a):
		return "a shared (carrier-grade NAT) address"
	case a.IsMulticast():
		return "a multicast address"
	}
	return ""
}

// refusedError is what the dialer's Control func returns for a forbidden
// address: the fetch is then refused_private.
type refusedError struct {
	host string
	addr netip.Addr
	why  string
}

func (e *refusedError) Error() string {
	return fmt.Sprintf("%s resolves to %s, %s, which the configuration does not allow", e.host, e.addr, e.why)
}

// splitHost returns the host of a "host:port" dial address.
func splitHost(addr string) string {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	return h
}
