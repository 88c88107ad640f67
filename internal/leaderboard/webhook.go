package leaderboard

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"time"
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

func checkWebhook(w Webhook) error {
	if w.URL == "" {
		if w.SecretEnv != "" {
			return fmt.Errorf("secret_env without url")
		}
		return nil
	}
	u, err := url.Parse(w.URL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("url %q: want an http(s) URL", w.URL)
	}
	if u.User != nil {
		return fmt.Errorf("url %q: credentials do not belong in the board file (use secret_env)", u.Redacted())
	}
	if w.SecretEnv != "" && !envNameRE.MatchString(w.SecretEnv) {
		return fmt.Errorf("secret_env %q: want an environment variable's name", w.SecretEnv)
	}
	return nil
}

// Notify POSTs changes to the board's webhook as JSON (the changes.json
// document), at most WebhookAttempts times, each bounded by WebhookTimeout,
// retrying on a network error, 429 or 5xx only. Headers:
// Content-Type application/json, X-Benchline-Delivery "<board>/<stamp>"
// (the same on every attempt, so a receiver can drop repeats), and, when
// SecretEnv names a set variable, X-Benchline-Signature "sha256=<hex
// HMAC-SHA256 of the body>". It returns the attempts made and, when no
// attempt was accepted, why.
func Notify(ctx context.Context, client *http.Client, w Webhook, ch Changes) (int, error) {
	body, err := json.Marshal(ch)
	if err != nil {
		return 0, err
	}
	sig := ""
	if w.SecretEnv != "" {
		if key := os.Getenv(w.SecretEnv); key != "" {
			m := hmac.New(sha256.New, []byte(key))
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
		retry, err := post(ctx, client, w.URL, body, sig, ch.Board+"/"+ch.Stamp)
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

func post(ctx context.Context, client *http.Client, target string, body []byte, sig, delivery string) (retry bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, WebhookTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "benchline-leaderboard")
	req.Header.Set("X-Benchline-Delivery", delivery)
	if sig != "" {
		req.Header.Set("X-Benchline-Signature", sig)
	}
	res, err := client.Do(req)
	if err != nil {
		return true, fmt.Errorf("leaderboard: webhook: %w", err)
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	switch {
	case res.StatusCode >= 200 && res.StatusCode < 300:
		return false, nil
	case res.StatusCode == http.StatusTooManyRequests || res.StatusCode >= 500:
		return true, fmt.Errorf("leaderboard: webhook: %s", res.Status)
	default:
		return false, fmt.Errorf("leaderboard: webhook: %s (not retried)", res.Status)
	}
}
