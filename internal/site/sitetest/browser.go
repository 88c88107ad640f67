package sitetest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Browser is Debian's chromium, headless (the flags of
// /work/shared/docs/platform.md: no sandbox as root, no background
// networking, a fresh profile) and records console errors, uncaught
// exceptions and error log entries (failed loads, CSP violations).
type Browser struct {
	ctx       context.Context
	artifacts string
	mu        sync.Mutex
	problems  []string
}

// NewBrowser starts chromium for the test (it stops when the test ends;
// a failed test leaves a screenshot in the artifacts directory). It fails
// the test when chromium is not installed: `make setup` installs it.
func NewBrowser(t testing.TB) *Browser {
	t.Helper()
	exe := ""
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			exe = p
			break
		}
	}
	if exe == "" {
		t.Fatal("chromium is not installed: the browser tests drive Debian's chromium; `make setup` installs it (apt-get install -y chromium)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("allow-file-access-from-files", false), chromedp.WindowSize(1280, 900))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelC(); cancelA() })
	b := &Browser{ctx: ctx, artifacts: artifactsDir(t)}
	t.Cleanup(func() { // runs before the browser stops: the page as the failure left it
		if !t.Failed() {
			return
		}
		sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		if png, err := chromedp.Run(sctx, chromedp.FullScreenshot(100)); err == nil {
			_ = os.WriteFile(filepath.Join(b.artifacts, "failure.png"), png, 0o644)
		}
	})
	// Listen sees each event before the command that follows it returns, so
	// noProblems after an action has every message that action caused.
	err := chromedp.Listen(ctx, func(ev any) {
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if typ := string(e.Type); typ == "error" || typ == "warning" || typ == "assert" {
				var args []string
				for _, a := range e.Args {
					args = append(args, strings.TrimSpace(string(a.Value)+" "+a.Description))
				}
				b.problem("console.%s: %s", typ, strings.Join(args, " "))
			}
		case *runtime.EventExceptionThrown:
			msg := e.ExceptionDetails.Text
			if e.ExceptionDetails.Exception != nil {
				msg += " " + e.ExceptionDetails.Exception.Description
			}
			b.problem("exception: %s", msg)
		case *cdplog.EventEntryAdded:
			if e.Entry.Level == cdplog.EntryLevelError || e.Entry.Level == cdplog.EntryLevelWarning {
				b.problem("log %s: %s %s", e.Entry.Level, e.Entry.Text, e.Entry.URL)
			}
		}
	})
	if err != nil {
		t.Fatalf("start chromium (%s): %v", exe, err)
	}
	return b
}

func (b *Browser) problem(format string, args ...any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.problems = append(b.problems, fmt.Sprintf(format, args...))
}

// NoProblems fails the test on any console error seen so far.
func (b *Browser) NoProblems(t testing.TB, where string) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range b.problems {
		t.Errorf("%s: %s", where, p)
	}
	b.problems = nil
}

// Run runs actions, bounded: a loaded 2-core machine is slow, but nothing
// waits forever.
func (b *Browser) Run(t testing.TB, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 2*time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// Shot writes a full-page screenshot into the artifacts directory.
func (b *Browser) Shot(t testing.TB, name string) {
	t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	p := filepath.Join(b.artifacts, name+".png")
	if err := os.WriteFile(p, png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// artifactsDir is $BENCHLINE_ARTIFACTS/site-browser when set (kept), else a
// test temporary directory (removed after the test).
func artifactsDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if root := os.Getenv("BENCHLINE_ARTIFACTS"); root != "" {
		dir = filepath.Join(root, "site-browser")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("screenshots in %s (set BENCHLINE_ARTIFACTS to keep them)", dir)
	return dir
}

// Eval runs a JS expression and decodes its JSON result into out.
func (b *Browser) Eval(t testing.TB, expr string, out any) {
	t.Helper()
	raw, err := chromedp.Run(b.ctx, chromedp.Evaluate[string]("JSON.stringify("+expr+")"))
	if err != nil {
		t.Fatalf("eval %s: %v", expr, err)
	}
	if err := json.Unmarshal([]byte(raw), out); err != nil {
		t.Fatalf("eval %s: %v (%s)", expr, err, raw)
	}
}

// Clear empties an input (the keys typed next make the search).
func (b *Browser) Clear(t testing.TB, sel string) {
	t.Helper()
	var ok bool
	b.Eval(t, fmt.Sprintf(`(document.querySelector(%q).value = "") === ""`, sel), &ok)
}

// WaitJS polls a JS boolean expression.
func (b *Browser) WaitJS(t testing.TB, what, expr string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if ok, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](expr)); err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			status, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`(document.querySelector(".status")||{}).textContent||""`))
			t.Fatalf("waiting for %s (%s): timed out; status %q", what, expr, status)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// PlotLabelProblems is a script that measures every text of every plot on
// the page (its rendered box): each must lie inside its plot, and no two
// may overlap. It returns the problems found.
const PlotLabelProblems = `(() => {
  const out = [];
  for (const svg of document.querySelectorAll("svg.plot")) {
    const box = svg.getBoundingClientRect();
    const texts = [...svg.querySelectorAll("text")].map(t => ({t: t.textContent, r: t.getBoundingClientRect()}));
    for (const {t, r} of texts) {
      if (r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5)
        out.push(svg.id + ": " + JSON.stringify(t) + " leaves the plot");
    }
    for (let i = 0; i < texts.length; i++) for (let j = i + 1; j < texts.length; j++) {
      const a = texts[i].r, b = texts[j].r;
      const w = Math.min(a.right, b.right) - Math.max(a.left, b.left), h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
      if (w > 0.5 && h > 0.5) out.push(svg.id + ": " + JSON.stringify(texts[i].t) + " overlaps " + JSON.stringify(texts[j].t));
    }
  }
  return out;
})()`

// CheckPlots opens each page and fails on any plot label that leaves its
// plot or overlaps another, on any console error, and on any problem one
// of the extra scripts returns (each a JS expression giving a list of
// strings); it returns how many plots it measured.
func CheckPlots(t testing.TB, b *Browser, base string, pages []string, extra ...string) int {
	t.Helper()
	n := 0
	for _, p := range pages {
		b.Run(t, "open "+p, chromedp.Navigate(base+p), chromedp.WaitReady(chromedp.CSS("main")))
		for _, script := range append([]string{PlotLabelProblems}, extra...) {
			var problems []string
			b.Eval(t, script, &problems)
			for _, pr := range problems {
				t.Errorf("%s: %s", p, pr)
			}
		}
		var count int
		b.Eval(t, `document.querySelectorAll("svg.plot").length`, &count)
		n += count
		b.NoProblems(t, p)
	}
	return n
}

// MeanOfNothing is a script listing every table cell of the page that
// shows a mean over no sample ("n=0"): a metric a scope has no scored
// sample of must read "–", never a score of zero.
const MeanOfNothing = `[...document.querySelectorAll("td")].filter(td => /\bn=0\b/.test(td.textContent)).map(td => "a mean of n=0: " + td.textContent.trim())`

// Context is the browser's context, for chromedp calls of a test's own.
func (b *Browser) Context() context.Context { return b.ctx }
