package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/baseline"
	"github.com/benchline/benchline/internal/modelapi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
)

// TestClassifyHTTP drives real HTTP replies through Complete and checks the
// class, Retry-After and the Temporal error each becomes.
func TestClassifyHTTP(t *testing.T) {
	type reply struct {
		status int
		header map[string]string
		body   string
	}
	cases := []struct {
		name       string
		reply      reply
		class      Class
		retryAfter time.Duration
	}{
		{"429 retry-after seconds", reply{429, map[string]string{"Retry-After": "7"}, `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`}, ClassRateLimit, 7 * time.Second},
		{"429 retry-after-ms", reply{429, map[string]string{"Retry-After-Ms": "250", "Retry-After": "1"}, `{"error":{"message":"slow down","type":"tokens"}}`}, ClassRateLimit, 250 * time.Millisecond},
		{"429 quota", reply{429, nil, `{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}`}, ClassQuota, 0},
		{"500", reply{500, nil, `{"error":{"message":"internal","type":"server_error"}}`}, ClassServer, 0},
		{"502 html", reply{502, nil, `<html>bad gateway</html>`}, ClassServer, 0},
		{"503 overloaded", reply{503, map[string]string{"Retry-After": "2"}, `{"error":{"message":"overloaded","type":"server_error"}}`}, ClassOverloaded, 2 * time.Second},
		{"529", reply{529, nil, `{"error":{"message":"overloaded"}}`}, ClassOverloaded, 0},
		{"504", reply{504, nil, `gateway timeout`}, ClassTimeout, 0},
		{"408", reply{408, nil, `{"error":{"message":"timeout"}}`}, ClassTimeout, 0},
		{"400", reply{400, nil, `{"error":{"message":"Invalid value for 'temperature'","type":"invalid_request_error"}}`}, ClassBadRequest, 0},
		{"400 context length", reply{400, nil, `{"error":{"message":"This model's maximum context length is 8192 tokens","type":"invalid_request_error","code":"context_length_exceeded"}}`}, ClassContextLength, 0},
		{"413", reply{413, nil, `too large`}, ClassContextLength, 0},
		{"400 content filter", reply{400, nil, `{"error":{"message":"filtered","code":"content_filter"}}`}, ClassContentFilter, 0},
		{"401", reply{401, nil, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`}, ClassAuth, 0},
		{"403", reply{403, nil, `forbidden`}, ClassAuth, 0},
		{"404", reply{404, nil, `{"error":{"message":"The model does not exist","code":"model_not_found"}}`}, ClassNotFound, 0},
		{"422", reply{422, nil, `{"detail":"bad"}`}, ClassBadRequest, 0},
		{"500 error as a string", reply{500, nil, `{"error":"upstream exploded"}`}, ClassServer, 0},
		{"500 error without message", reply{500, nil, `{"error":{"code":500}}`}, ClassServer, 0},
		{"500 error with a bad param", reply{500, nil, `{"error":{"message":"x","param":5}}`}, ClassServer, 0},
		{"401 error as a string", reply{401, nil, `{"error":"invalid api key"}`}, ClassAuth, 0},
		{"404 error as a string", reply{404, nil, `{"error":"no such model"}`}, ClassNotFound, 0},
		{"200 garbage", reply{200, nil, `{"choices": nope}`}, ClassServer, 0},
		{"200 no choices", reply{200, nil, `{"choices": []}`}, ClassServer, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				for k, v := range tc.reply.header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(tc.reply.status)
				_, _ = w.Write([]byte(tc.reply.body))
			}))
			defer hs.Close()
			g := newTestGateway(t, hs.URL+"/v1", nil, Options{})
			_, err := g.Complete(context.Background(), modelapi.Request{Model: "baseline/x", Messages: userMsg("hi")})
			var ge *Error
			require.ErrorAs(t, err, &ge)
			assert.Equal(t, tc.class, ge.Class, ge.Error())
			assert.Equal(t, tc.retryAfter, ge.RetryAfter)
			assert.Equal(t, 1, ge.Attempts)
			assert.Equal(t, tc.reply.status, ge.Status, "the HTTP status is kept whatever the body")

			var ae *temporal.ApplicationError
			require.ErrorAs(t, ToTemporal(err), &ae)
			assert.Equal(t, tc.class.String(), ae.Type())
			assert.Equal(t, !tc.class.Retryable(), ae.NonRetryable())
			assert.Equal(t, tc.retryAfter, ae.NextRetryDelay())
			if tc.class.Retryable() {
				assert.False(t, IsModelFailure(err), "infrastructure errors are never model failures")
			}
		})
	}
}

// resetMidReply serves the start of a 200 reply, then resets the
// connection (SO_LINGER 0), and returns its base URL.
func resetMidReply(t *testing.T) string {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		_, _ = buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"choices\": [")
		_ = buf.Flush()
		if tc, ok := conn.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		_ = conn.Close()
	}))
	t.Cleanup(hs.Close)
	return hs.URL + "/v1"
}

func TestClassifyNetwork(t *testing.T) {
	_, url := startBaseline(t, baseline.Options{})
	for _, tc := range []struct {
		name, url, faults string
		class             Class
	}{
		{"refused", "http://" + refusingAddr(t) + "/v1", "", ClassNetwork},
		{"dropped", url, "drop=1", ClassNetwork},
		{"reset mid-reply", resetMidReply(t), "", ClassNetwork},
		{"timeout", url, "timeout=1", ClassTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Only the hanging server should meet the time-out: the
			// others get one no loaded machine reaches, so that their
			// failure, not a slow answer, is what is classed.
			timeout := time.Minute
			if tc.class == ClassTimeout {
				timeout = 200 * time.Millisecond
			}
			g := newTestGateway(t, tc.url, func(p *Provider) { p.Timeout = timeout },
				Options{Transport: faultTransport(tc.faults)})
			_, err := g.Complete(context.Background(), modelapi.Request{Model: "baseline/reference", Messages: userMsg("hi")})
			var ge *Error
			require.ErrorAs(t, err, &ge)
			assert.Equal(t, tc.class, ge.Class, ge.Error())
			assert.True(t, ge.Retryable())
			assert.False(t, IsModelFailure(err))
		})
	}
}

// refusingAddr is a loopback address that refuses connections until the
// test ends: a socket bound to it that never listens. It holds the port,
// so no other process can start listening there meanwhile, as it could
// on the port of a listener that was closed.
func refusingAddr(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	t.Cleanup(func() { syscall.Close(fd) })
	require.NoError(t, syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}))
	sa, err := syscall.Getsockname(fd)
	require.NoError(t, err)
	return fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
}

// TestIsNetworkByType: connection failures are recognised by type and
// sentinel, wrapped as their producers wrap them; message text alone
// classes nothing.
func TestIsNetworkByType(t *testing.T) {
	reset := &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	for _, tc := range []struct {
		name    string
		err     error
		network bool
	}{
		{"reset, from the transport", &url.Error{Op: "Post", URL: "http://x/v1/chat/completions", Err: reset}, true},
		{"reset, reading the reply (go-openai's wrap)", fmt.Errorf("error, reading response body: %w", reset), true},
		{"reset, bare errno", fmt.Errorf("read: %w", syscall.ECONNRESET), true},
		{"refused", fmt.Errorf("dial: %w", syscall.ECONNREFUSED), true},
		{"broken pipe", fmt.Errorf("write: %w", syscall.EPIPE), true},
		{"reply cut short", fmt.Errorf("decode: %w", io.ErrUnexpectedEOF), true},
		{"idle connection closed by the server", &url.Error{Op: "Post", URL: "http://x/v1", Err: errors.New("http: server closed idle connection")}, true},
		{"text without a cause is not matched", errors.New("read tcp: connection reset by peer"), false},
		{"a reply that is not JSON", &json.SyntaxError{Offset: 3}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.network, isNetwork(tc.err))
		})
	}
}

func TestCanceled(t *testing.T) {
	_, url := startBaseline(t, baseline.Options{})
	g := newTestGateway(t, url, nil, Options{Transport: faultTransport("timeout=1")})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := g.Complete(ctx, modelapi.Request{Model: "baseline/reference", Messages: userMsg("hi")})
	assert.Equal(t, ClassCanceled, ClassOf(err))
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.ErrorIs(t, ToTemporal(err), context.DeadlineExceeded)
	assert.False(t, IsModelFailure(err))
}

func TestUnknownProviderAndModel(t *testing.T) {
	g := newTestGateway(t, "http://127.0.0.1:1/v1", nil, Options{})
	_, err := g.Complete(context.Background(), modelapi.Request{Model: "nope/x", Messages: userMsg("hi")})
	assert.Equal(t, ClassNotFound, ClassOf(err))
	// A worker started without the CLI's providers file fails here: the
	// error says what this process has and where a worker gets providers.
	assert.ErrorContains(t, err, `unknown provider "nope" (this process has baseline; a worker reads its providers from BENCHLINE_PROVIDERS`)
	_, err = g.Complete(context.Background(), modelapi.Request{Model: "no-slash", Messages: userMsg("hi")})
	assert.Equal(t, ClassBadRequest, ClassOf(err))
}

func TestRetryAfterDate(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h := http.Header{"Retry-After": {now.Add(3 * time.Second).Format(http.TimeFormat)}}
	assert.Equal(t, 3*time.Second, retryAfter(h, now))
	assert.Equal(t, time.Duration(0), retryAfter(http.Header{"Retry-After": {"soon"}}, now))
	assert.Equal(t, 1500*time.Millisecond, retryAfter(http.Header{"Retry-After": {"1.5"}}, now))
}

func TestClassTable(t *testing.T) {
	for c := range Class(len(classNames)) {
		assert.NotContains(t, c.String(), "class-", "every class has a name")
	}
	assert.Contains(t, NonRetryableErrorTypes(), "permanent-bad-request")
	assert.NotContains(t, NonRetryableErrorTypes(), "retryable-rate-limit")
	assert.Equal(t, ClassUnknown, ClassOf(errors.New("x")))
	assert.True(t, IsModelFailure(&Error{Class: ClassContextLength}))
	assert.False(t, IsModelFailure(&Error{Class: ClassAuth}), "a bad key is the operator's failure, not the model's")
}

// faultTransport sets the baseline fault header on every request.
func faultTransport(faults string) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if faults != "" {
			r = r.Clone(r.Context())
			r.Header.Set(baseline.FaultHeader, faults)
		}
		return http.DefaultTransport.RoundTrip(r)
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestFailedAttemptLogsStatus checks that the warning logged for a failed
// attempt carries the reply's HTTP status and the error its body, whatever
// shape the body has (finding 9: an HTTP 500 was logged as status=0).
func TestFailedAttemptLogsStatus(t *testing.T) {
	for _, body := range []string{"Internal Server Error", "<html>oops</html>", `{"error":"upstream exploded"}`, `{"error":{"message":"x","param":5}}`, ""} {
		t.Run(body, func(t *testing.T) {
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(http.StatusInternalServerError)
				_, _ = w.Write([]byte(body))
			}))
			defer hs.Close()
			var logs bytes.Buffer
			g := newTestGateway(t, hs.URL+"/v1", nil, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			_, err := g.Complete(context.Background(), modelapi.Request{Model: "baseline/x", Messages: userMsg("hi")})
			var ge *Error
			require.ErrorAs(t, err, &ge)
			assert.Contains(t, logs.String(), "status=500")
			assert.Contains(t, logs.String(), "class=retryable-server")
			assert.Contains(t, err.Error(), "(HTTP 500)")
			if body != "" {
				assert.NotEmpty(t, ge.Message, "the body says what went wrong")
			}
		})
	}
}

func TestReasonOf(t *testing.T) {
	ge := &Error{Class: ClassContextLength, Model: "baseline/x", Status: 400, Message: "prompt too long"}
	tests := []struct {
		err  error
		want string
	}{
		{ge, "permanent-context-length: prompt too long"},
		{fmt.Errorf("toolpref: item 3: %w", ge), "permanent-context-length: prompt too long"},
		{&Error{Class: ClassContentFilter, Model: "a/b"}, "permanent-content-filter"},
		{errors.New("not a gateway error"), "not a gateway error"},
	}
	for _, tc := range tests {
		if got := ReasonOf(tc.err); got != tc.want {
			t.Errorf("ReasonOf(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
