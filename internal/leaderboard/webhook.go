package leaderboard

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"time"

	"github.com/benchline/benchline/internal/secret"
)

// Limits of a webhook delivery.
const (
	// WebhookAttempts is how many times Notify POSTs before it gives up.
	WebhookAttempts = 3
	// WebhookTimeout bounds each POST.
	WebhookTimeout = 10 * time.Second
)

// webhookBackoff is the wait before the second, third… attempt.
var webhookBackoff = []time.Duration{time.Second, 4 * time.Second}

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// RedactURL is what benchline ever shows of a webhook's URL, in messages,
// logs, results and stored objects: its scheme, host and path. The query
// string, credentials and fragment, where services put their tokens, are
// dropped; a string that does not parse as a URL with a host is shown as
// "(not a URL)", never as itself.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(not a URL)"
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}).String()
}

func checkWebhook(w Webhook) error {
	switch {
	case w.URL != "" && w.URLEnv != "":
		return fmt.Errorf("url and url_env: want one of them")
	case w.URLEnv != "":
		if !envNameRE.MatchString(w.URLEnv) {
			return fmt.Errorf("url_env %q: want an environment variable's name", w.URLEnv)
		}
	case w.URL != "":
		u, err := url.Parse(w.URL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return fmt.Errorf("url %s: want an http(s) URL", RedactURL(w.URL))
		}
		if u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
			// The board travels in workflow histories and schedules.
			return fmt.Errorf("url %s: credentials, a query string or a fragment do not belong in the board file "+
				"(put the whole URL in the worker's environment and name the variable with url_env)", RedactURL(w.URL))
		}
	case w.SecretEnv != "":
		return fmt.Errorf("secret_env without url or url_env")
	default:
		return nil
	}
	if w.SecretEnv != "" && !envNameRE.MatchString(w.SecretEnv) {
		return fmt.Errorf("secret_env %q: want an environment variable's name", w.SecretEnv)
	}
	return nil
}

// target is the URL a delivery goes to: URL, or the value of the variable
// URLEnv names in this process's environment.
// A URL from the environment may carry a token, so it is a secret.Value
// until the request is made.
func (w Webhook) target() (secret.Value, error) {
	if w.URLEnv == "" {
		return secret.New(w.URL), nil
	}
	raw := secret.New(os.Getenv(w.URLEnv))
	if raw.IsZero() {
		return raw, fmt.Errorf("leaderboard: webhook: url_env %s is not set in the worker's environment", w.URLEnv)
	}
	if u, err := url.Parse(raw.Reveal()); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return secret.Value{}, fmt.Errorf("leaderboard: webhook: url_env %s: %s: want an http(s) URL", w.URLEnv, RedactURL(raw.Reveal()))
	}
	return raw, nil
}

// Notify POSTs changes to the board's webhook as JSON (the changes.json
// document), at most WebhookAttempts times, each bounded by WebhookTimeout,
// retrying on a network error, 429 or 5xx only. Redirects are not followed
// (a 3xx is a failed delivery, not retried): the body and its signature go
// only where the board says. Headers:
// Content-Type application/json, X-Benchline-Delivery "<board>/<stamp>"
// (the same on every attempt, so a receiver can drop repeats), and, when
// SecretEnv names a set variable, X-Benchline-Signature "sha256=<hex
// HMAC-SHA256 of the body>". A nil client is http.DefaultClient. It
// returns the attempts made and, when no attempt was accepted, why; no
// message shows more of the URL than RedactURL.
func Notify(ctx context.Context, client *http.Client, w Webhook, ch Changes) (int, error) {
	target, err := w.target()
	if err != nil {
		return 0, err
	}
	if client == nil {
		client = http.DefaultClient
	}
	noRedirects := *client
	noRedirects.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	body, err := json.Marshal(ch)
	if err != nil {
		return 0, err
	}
	sig := ""
	if w.SecretEnv != "" {
		if key := secret.New(os.Getenv(w.SecretEnv)); !key.IsZero() {
			m := hmac.New(sha256.New, []byte(key.Reveal()))
			m.Write(body)
			sig = "sha256=" + hex.EncodeToString(m.Sum(nil))
		}
	}
	var last error
	for attempt := 1; attempt <= WebhookAttempts; attempt++ {
		if attempt > 1 {
			select {
			case <-ctx.Done():
				return attempt - 1, ctx.Err()
			case <-time.After(webhookBackoff[min(attempt-2, len(webhookBackoff)-1)]):
			}
		}
		retry, err := post(ctx, &noRedirects, target, body, sig, ch.Board+"/"+ch.Stamp)
		if err == nil {
			return attempt, nil
		}
		last = err
		if !retry {
			return attempt, err
		}
	}
	return WebhookAttempts, fmt.Errorf("%w (gave up after %d attempts)", last, WebhookAttempts)
}

func post(ctx context.Context, client *http.Client, target secret.Value, body []byte, sig, delivery string) (retry bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, WebhookTimeout)
	defer cancel()
	shown := RedactURL(target.Reveal())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target.Reveal(), bytes.NewReader(body))
	if err != nil { // its message quotes the URL
		return false, fmt.Errorf("leaderboard: webhook %s: not a URL to POST to", shown)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "benchline-leaderboard")
	req.Header.Set("X-Benchline-Delivery", delivery)
	if sig != "" {
		req.Header.Set("X-Benchline-Signature", sig)
	}
	res, err := client.Do(req)
	if err != nil {
		// A *url.Error quotes the whole URL: keep only its cause.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return true, fmt.Errorf("leaderboard: webhook %s: %w", shown, err)
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	switch {
	case res.StatusCode >= 200 && res.StatusCode < 300:
		return false, nil
	case res.StatusCode >= 300 && res.StatusCode < 400:
		return false, fmt.Errorf("leaderboard: webhook %s: %s: redirects are not followed (not retried)", shown, res.Status)
	case res.StatusCode == http.StatusTooManyRequests || res.StatusCode >= 500:
		return true, fmt.Errorf("leaderboard: webhook %s: %s", shown, res.Status)
	default:
		return false, fmt.Errorf("leaderboard: webhook %s: %s (not retried)", shown, res.Status)
	}
}
