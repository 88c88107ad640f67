package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"
	"go.temporal.io/sdk/temporal"

	"github.com/benchline/benchline/internal/limits"
	"github.com/benchline/benchline/internal/modelapi"
)

// Class says why a call failed and whether trying again can help. Do not
// reorder: values are recorded with results.
type Class int

// Error classes. Retryable classes are infrastructure failures: a sample
// that ends with one was never answered, it must not be scored as a model
// failure. Permanent classes fail the sample with a recorded reason.
const (
	ClassUnknown       Class = iota // unclassified; treated as retryable
	ClassRateLimit                  // 429: retryable after RetryAfter
	ClassOverloaded                 // 503, 529: retryable, cuts concurrency
	ClassServer                     // other 5xx, malformed replies: retryable
	ClassTimeout                    // attempt deadline, 408, 504: retryable
	ClassNetwork                    // refused, reset, EOF: retryable
	ClassBadRequest                 // 400, 422: permanent
	ClassAuth                       // 401, 403: permanent
	ClassContextLength              // prompt too long: permanent
	ClassNotFound                   // 404, unknown model or provider: permanent
	ClassQuota                      // 429 insufficient_quota: permanent
	ClassContentFilter              // refused by a content filter: permanent
	ClassCanceled                   // the caller's context ended: not retried by the gateway
	ClassReplyTooLarge              // a reply over limits.max_reply_bytes: permanent, the model's failure
	ClassRedirect                   // a redirect to another origin (or too many): permanent, the key is never sent there
)

var classNames = [...]string{
	ClassUnknown:       "retryable-unknown",
	ClassRateLimit:     "retryable-rate-limit",
	ClassOverloaded:    "retryable-overloaded",
	ClassServer:        "retryable-server",
	ClassTimeout:       "retryable-timeout",
	ClassNetwork:       "retryable-network",
	ClassBadRequest:    "permanent-bad-request",
	ClassAuth:          "permanent-auth",
	ClassContextLength: "permanent-context-length",
	ClassNotFound:      "permanent-not-found",
	ClassQuota:         "permanent-quota",
	ClassContentFilter: "permanent-content-filter",
	ClassCanceled:      "canceled",
	ClassReplyTooLarge: "reply-too-large",
	ClassRedirect:      "permanent-redirect",
}

// String is the class name, also used as the Temporal error type.
func (c Class) String() string {
	if c < 0 || int(c) >= len(classNames) {
		return "class-" + strconv.Itoa(int(c))
	}
	return classNames[c]
}

// Retryable reports whether the same request may succeed later.
func (c Class) Retryable() bool {
	switch c {
	case ClassUnknown, ClassRateLimit, ClassOverloaded, ClassServer, ClassTimeout, ClassNetwork:
		return true
	}
	return false
}

// overload reports whether the class signals the provider is saturated: the
// adaptive limiter cuts concurrency on these.
func (c Class) overload() bool { return c == ClassRateLimit || c == ClassOverloaded }

// Error is every error Complete returns. Its message never contains an API
// key: provider bodies are truncated and scrubbed of the key.
type Error struct {
	Class    Class
	Model    string // <provider>/<model>
	Status   int    // HTTP status, 0 when no response
	Message  string // provider's message, scrubbed
	Attempts int    // HTTP attempts made by this Complete
	// RetryAfter is the provider's Retry-After (or retry-after-ms), 0 if
	// none, at most the provider's max_retry_after.
	RetryAfter time.Duration
	// asked is the Retry-After the provider asked for when it was longer
	// than max_retry_after (RetryAfter is then the cap); 0 otherwise.
	asked time.Duration
	cause error // context.Canceled/DeadlineExceeded only, for errors.Is
	// deferred marks a request a batch run's pass deferred to a batch
	// (IsDeferred); batchFailed one whose batch attempts ended without an
	// answer (IsBatchFailure).
	deferred, batchFailed bool
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "gateway: %s: %s", e.Model, e.Class)
	if e.Status != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.Status)
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, " retry after %s", e.RetryAfter)
		if e.asked > 0 {
			fmt.Fprintf(&b, " (asked for %s, cut to the provider's max_retry_after)", e.asked)
		}
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " after %d attempts", e.Attempts)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	return b.String()
}

// Unwrap exposes context errors only; provider errors are not chained
// because their text may echo credentials.
func (e *Error) Unwrap() error { return e.cause }

// Retryable reports whether the class is retryable.
func (e *Error) Retryable() bool { return e.Class.Retryable() }

// Reason is a short stable string for the results row of a failed sample:
// "<class>: <message>".
func (e *Error) Reason() string {
	if e.Message == "" {
		return e.Class.String()
	}
	return e.Class.String() + ": " + e.Message
}

// ClassOf returns the class of err: the Class of an *Error, ClassCanceled
// for context errors, ClassUnknown otherwise.
func ClassOf(err error) Class {
	var ge *Error
	switch {
	case err == nil:
		return ClassUnknown
	case errors.As(err, &ge):
		return ge.Class
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return ClassCanceled
	}
	return ClassUnknown
}

// IsModelFailure reports whether err means the model itself failed on the
// sample: errors.Is(err, modelapi.ErrModelFailure) (see Error.Is).
func IsModelFailure(err error) bool { return errors.Is(err, modelapi.ErrModelFailure) }

// Is matches modelapi.ErrModelFailure when the class is a permanent error
// the request caused (not auth, quota, not-found, a refused redirect or a
// cancellation, which say nothing about the model), and modelapi.ErrDeferred when the request
// was deferred to a batch.
func (e *Error) Is(target error) bool {
	if target == modelapi.ErrDeferred {
		return e.deferred
	}
	c := e.Class
	return target == modelapi.ErrModelFailure && !c.Retryable() && c != ClassCanceled && c != ClassAuth && c != ClassQuota && c != ClassNotFound && c != ClassRedirect
}

// ReasonOf is what a record keeps of err (modelapi.ReasonOf).
func ReasonOf(err error) string { return modelapi.ReasonOf(err) }

// ToTemporal converts an error from Complete into a Temporal application
// error for an activity to return: the type is the class name, permanent
// classes are non-retryable, and rate limits carry the provider's
// Retry-After as NextRetryDelay so Temporal waits as long as the server
// asked. Context errors are returned unchanged. The cause is not attached:
// only the scrubbed message enters workflow history.
func ToTemporal(err error) error { return toTemporal(err, false) }

// ToTemporalWrapped is ToTemporal for a gateway error the caller wrapped
// with context of its own (the item, the model): the message is err's whole
// text, which holds the gateway's scrubbed message, not only the latter.
func ToTemporalWrapped(err error) error { return toTemporal(err, true) }

func toTemporal(err error, whole bool) error {
	var ge *Error
	if err == nil || !errors.As(err, &ge) {
		return err
	}
	if ge.Class == ClassCanceled {
		return ge.cause
	}
	opts := temporal.ApplicationErrorOptions{NonRetryable: !ge.Class.Retryable()}
	if ge.RetryAfter > 0 && ge.Class.Retryable() {
		opts.NextRetryDelay = ge.RetryAfter
	}
	msg := ge.Error()
	if whole {
		msg = err.Error()
	}
	return temporal.NewApplicationErrorWithOptions(msg, ge.Class.String(), opts)
}

// NonRetryableErrorTypes lists the Temporal error types of permanent
// classes, for RetryPolicy.NonRetryableErrorTypes.
func NonRetryableErrorTypes() []string {
	var out []string
	for c := range Class(len(classNames)) {
		if !c.Retryable() && c != ClassCanceled {
			out = append(out, c.String())
		}
	}
	return out
}

// attemptInfo is what the transport saw of one HTTP attempt.
type attemptInfo struct {
	status int
	header http.Header
	// tooLarge is set when the reply's body passed the reply limit (its
	// value); head is the start of the body, for the error.
	tooLarge int64
	head     []byte
	// maxRetryAfter caps the reply's Retry-After (the provider's
	// max_retry_after); 0: DefaultMaxRetryAfter.
	maxRetryAfter time.Duration
	// maxBody, when set, is the body's limit instead of the reply limit:
	// a batch result file is bounded by the provider's max_result_bytes
	// (readBatchFile), its lines each by the reply limit.
	maxBody int64
}

// headBytes is how much of a reply over the limit its error keeps.
const headBytes = 120

// cappedBody is a reply's body that fails once more than max bytes are
// read from it, so a reply of any size costs at most max bytes of memory.
type cappedBody struct {
	io.ReadCloser
	max, n int64
	info   *attemptInfo
}

// errReplyTooLarge is what reading a reply over the limit returns.
var errReplyTooLarge = errors.New("gateway: reply too large")

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.n > b.max {
		return 0, errReplyTooLarge
	}
	if rest := b.max + 1 - b.n; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := b.ReadCloser.Read(p)
	if b.info != nil && len(b.info.head) < headBytes {
		b.info.head = append(b.info.head, p[:min(n, headBytes-len(b.info.head))]...)
	}
	b.n += int64(n)
	if b.n > b.max {
		if b.info != nil {
			b.info.tooLarge = b.max
		}
		return n, errReplyTooLarge
	}
	return n, err
}

// replyTooLarge makes e the error of a reply over limit bytes, keeping
// head, its start.
func replyTooLarge(e *Error, limit int64, head []byte, red *Redactor) *Error {
	e.Class = ClassReplyTooLarge
	e.Message = scrub(fmt.Sprintf("the reply is larger than %d bytes, the limit (limits.max_reply_bytes, BENCHLINE_MAX_REPLY_BYTES): it was not read further, is not scored, and only its start is kept: %q",
		limit, head), red, 400)
	return e
}

// classify turns the outcome of one attempt into an *Error.
func classify(err error, info *attemptInfo, parent context.Context, model string, red *Redactor) *Error {
	e := &Error{Model: model}
	if info != nil {
		e.Status = info.status
		e.setRetryAfter(info)
	}
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	var redirErr *redirectError
	switch {
	case parent.Err() != nil:
		e.Class, e.cause, e.Message = ClassCanceled, parent.Err(), parent.Err().Error()
		return e
	case errors.As(err, &redirErr):
		// Only the refusal's own text: the client's error quotes the
		// redirect's whole Location.
		e.Class, e.RetryAfter, e.asked, e.Message = ClassRedirect, 0, 0, scrub(redirErr.Error(), red, 600)
		return e
	case info != nil && info.tooLarge > 0 || errors.Is(err, errReplyTooLarge):
		limit := limits.Get().ReplyBytes
		var head []byte
		if info != nil {
			limit, head = info.tooLarge, info.head
		}
		return replyTooLarge(e, limit, head, red)
	case errors.As(err, &reqErr):
		// go-openai returns a RequestError for an error reply whose body is
		// not a well-formed OpenAI error, and then wraps the half-decoded
		// APIError (status 0) in it: read the status and body from here.
		status := reqErr.HTTPStatusCode
		if status == 0 {
			status = e.Status
		}
		return httpError(status, reqErr.Body, info, model, red)
	case errors.As(err, &apiErr):
		if apiErr.HTTPStatusCode != 0 {
			e.Status = apiErr.HTTPStatusCode
		}
		code := fmt.Sprint(apiErr.Code)
		e.Message = scrub(fmt.Sprintf("%s (type %q, code %q)", apiErr.Message, apiErr.Type, code), red, 300)
		e.Class = classifyStatus(e.Status, apiErr.Message+" "+apiErr.Type+" "+code)
	case errors.Is(err, context.DeadlineExceeded):
		e.Class, e.Message = ClassTimeout, "attempt timed out"
	case isNetwork(err):
		e.Class, e.Message = ClassNetwork, scrub(err.Error(), red, 300)
	case e.Status >= 200 && e.Status < 300:
		// A 2xx whose body did not decode: a truncated or malformed reply.
		e.Class, e.Message = ClassServer, "malformed response: "+scrub(err.Error(), red, 200)
	default:
		e.Class, e.Message = ClassUnknown, scrub(err.Error(), red, 300)
	}
	return e
}

func classifyStatus(status int, text string) Class {
	t := strings.ToLower(text)
	switch {
	case status == http.StatusTooManyRequests:
		if strings.Contains(t, "insufficient_quota") || strings.Contains(t, "exceeded your current quota") {
			return ClassQuota
		}
		return ClassRateLimit
	case status == http.StatusServiceUnavailable || status == 529:
		return ClassOverloaded
	case status == http.StatusRequestTimeout || status == http.StatusGatewayTimeout:
		return ClassTimeout
	case status >= 500:
		return ClassServer
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return ClassAuth
	case status == http.StatusNotFound:
		return ClassNotFound
	case status == http.StatusRequestEntityTooLarge || isContextLength(t):
		return ClassContextLength
	case strings.Contains(t, "content_filter") || strings.Contains(t, "content management policy"):
		return ClassContentFilter
	case status == http.StatusConflict:
		return ClassServer
	case status >= 400:
		return ClassBadRequest
	}
	return ClassUnknown
}

func isContextLength(t string) bool {
	for _, s := range []string{"context_length_exceeded", "maximum context length", "context window", "prompt is too long", "too many tokens", "reduce the length"} {
		if strings.Contains(t, s) {
			return true
		}
	}
	return false
}

// isNetwork reports whether err is a failed connection: refused, reset,
// closed early or broken. It matches types and sentinels only, never
// message text: the HTTP client returns every transport failure as a
// *url.Error, itself a net.Error (net/http's "server closed idle
// connection", which has no exported sentinel, among them), and go-openai
// wraps the errors of reading a reply with %w, so the chain reaches them.
func isNetwork(err error) bool {
	var ne net.Error
	var oe *net.OpError
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.EPIPE) || errors.As(err, &oe) || errors.As(err, &ne)
}

// setRetryAfter sets e's RetryAfter from the reply info saw, cut to
// info's maxRetryAfter (keeping what the provider asked for, for the
// message).
func (e *Error) setRetryAfter(info *attemptInfo) {
	if info == nil || info.header == nil {
		return
	}
	limit := info.maxRetryAfter
	if limit <= 0 {
		limit = DefaultMaxRetryAfter
	}
	e.RetryAfter = retryAfter(info.header, time.Now())
	if e.RetryAfter > limit {
		e.RetryAfter, e.asked = limit, e.RetryAfter
	}
}

// retryAfter reads retry-after-ms, then Retry-After (seconds or HTTP
// date). A value that is not a positive number or a future date (zero,
// negative, NaN, a past date) is no wait; one past what a Duration holds
// is the longest Duration (callers cap it).
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); (err == nil || errors.Is(err, strconv.ErrRange)) && ms > 0 {
			return seconds(ms / 1000)
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		return seconds(s) // ParseFloat gives ±Inf for a number out of range
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now) // saturates
	}
	return 0
}

// seconds converts s seconds to a Duration: 0 unless positive (NaN is
// not), the longest Duration past it.
func seconds(s float64) time.Duration {
	switch {
	case !(s > 0):
		return 0
	case s >= float64(math.MaxInt64)/float64(time.Second):
		return math.MaxInt64
	}
	return time.Duration(s * float64(time.Second))
}

var bearerRE = regexp.MustCompile(`(?i)(bearer\s+)[^\s"',;}]+`)

// truncate cuts s to at most n bytes, at a rune boundary, and marks the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// scrub removes every configured key (plain or encoded, see Redactor) and
// any bearer token from s, then cuts it to at most n bytes. It removes
// before it cuts, so a cut never leaves part of a key behind.
func scrub(s string, red *Redactor, n int) string {
	margin := 0
	if red != nil {
		margin = red.margin
	}
	if limit := n + margin + 2*len(redacted); len(s) > limit {
		s = s[:limit]
	}
	s = bearerRE.ReplaceAllString(s, "${1}"+redacted)
	return truncate(red.Redact(s), n)
}
