package baseline

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// FaultHeader is the request header that overrides the server's Faults for
// one request, in ParseFaults syntax. Tests use it to inject faults into a
// single call without restarting the server.
const FaultHeader = "X-Benchline-Faults"

// Faults configures injected infrastructure failures. Rates are shares of
// requests in [0, 1]; at most one fault hits a request, drawn in the order
// rate limit, server error, timeout, drop, and their rates must sum to at
// most 1. The draw is a pure function of the request, how many times the
// server has seen that exact request before, and Seed, so a retried request
// gets a fresh draw and a run is reproducible.
type Faults struct {
	// Latency is added before every reply (also before injected errors).
	Latency time.Duration
	// RateLimit is the share of requests answered 429 with Retry-After.
	RateLimit float64
	// RetryAfter is the Retry-After sent with 429s; default 1s. Sub-second
	// values are also sent as retry-after-ms.
	RetryAfter time.Duration
	// ServerError is the share of requests answered 500.
	ServerError float64
	// Timeout is the share of requests that never get an answer: the server
	// holds them until the client gives up.
	Timeout float64
	// Drop is the share of requests whose connection is closed without a
	// response.
	Drop float64
	// Seed varies the draws.
	Seed uint64
}

// ParseFaults parses "rate_limit=0.2,server_error=0.05,timeout=0.02,drop=0.01,
// latency=200ms,retry_after=1s,seed=7". Empty input is no faults.
func ParseFaults(s string) (Faults, error) {
	var f Faults
	err := eachKV("faults", "", s, func(k, v string) (err error) {
		switch k {
		case "latency":
			f.Latency, err = time.ParseDuration(v)
		case "retry_after":
			f.RetryAfter, err = time.ParseDuration(v)
		case "rate_limit":
			f.RateLimit, err = strconv.ParseFloat(v, 64)
		case "server_error":
			f.ServerError, err = strconv.ParseFloat(v, 64)
		case "timeout":
			f.Timeout, err = strconv.ParseFloat(v, 64)
		case "drop":
			f.Drop, err = strconv.ParseFloat(v, 64)
		case "seed":
			f.Seed, err = strconv.ParseUint(v, 10, 64)
		default:
			return errUnknownKey
		}
		return err
	})
	if err != nil {
		return Faults{}, err
	}
	return f, f.Validate()
}

// errUnknownKey is what an eachKV callback returns for a key it does not take.
var errUnknownKey = errors.New("unknown key")

// eachKV calls set for each key=value of a comma-separated option string
// (what names it in errors: "faults", "batch options"; keys, when set,
// lists the keys it takes for the error of an unknown one), keys trimmed;
// empty items are skipped.
func eachKV(what, keys, s string, set func(k, v string) error) error {
	for _, kv := range strings.Split(s, ",") {
		if kv = strings.TrimSpace(kv); kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("baseline: %s %q: want key=value", what, kv)
		}
		k = strings.TrimSpace(k)
		if err := set(k, v); errors.Is(err, errUnknownKey) {
			if keys != "" {
				return fmt.Errorf("baseline: %s: unknown key %q (%s)", what, k, keys)
			}
			return fmt.Errorf("baseline: %s: unknown key %q", what, k)
		} else if err != nil {
			return fmt.Errorf("baseline: %s %q: %w", what, kv, err)
		}
	}
	return nil
}

// Validate checks rates and durations.
func (f Faults) Validate() error {
	sum := 0.0
	for _, r := range []float64{f.RateLimit, f.ServerError, f.Timeout, f.Drop} {
		if r < 0 || r > 1 {
			return fmt.Errorf("baseline: fault rate %v not in [0, 1]", r)
		}
		sum += r
	}
	if sum > 1+1e-9 {
		return fmt.Errorf("baseline: fault rates sum to %v > 1", sum)
	}
	if f.Latency < 0 || f.RetryAfter < 0 {
		return fmt.Errorf("baseline: negative fault duration")
	}
	return nil
}

// String is the ParseFaults form of f.
func (f Faults) String() string {
	var parts []string
	add := func(k string, v float64) {
		if v != 0 {
			parts = append(parts, k+"="+strconv.FormatFloat(v, 'f', -1, 64))
		}
	}
	if f.Latency != 0 {
		parts = append(parts, "latency="+f.Latency.String())
	}
	add("rate_limit", f.RateLimit)
	if f.RetryAfter != 0 {
		parts = append(parts, "retry_after="+f.RetryAfter.String())
	}
	add("server_error", f.ServerError)
	add("timeout", f.Timeout)
	add("drop", f.Drop)
	if f.Seed != 0 {
		parts = append(parts, "seed="+strconv.FormatUint(f.Seed, 10))
	}
	return strings.Join(parts, ",")
}

// fault is the outcome of a draw.
type fault int

const (
	faultNone fault = iota
	faultRateLimit
	faultServerError
	faultTimeout
	faultDrop
)

func (f Faults) draw(u float64) fault {
	for _, c := range []struct {
		rate float64
		f    fault
	}{{f.RateLimit, faultRateLimit}, {f.ServerError, faultServerError}, {f.Timeout, faultTimeout}, {f.Drop, faultDrop}} {
		if u < c.rate {
			return c.f
		}
		u -= c.rate
	}
	return faultNone
}
