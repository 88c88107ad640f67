// Package ifevalcode scores IFEvalCode responses: it extracts the code from a
// model's reply as the original harness does, assembles the correctness
// program for the item's language, runs it and the Python instruction check
// in the sandbox (internal/sandbox/lang), and aggregates the Corr. and Instr.
// metrics per language and per question language.
//
// The assembly rules follow CSJianYang/IFEvalCode's eval_models.py; see
// docs/benchmarks/ifevalcode.md for the rules and the departures.
package ifevalcode

import (
	"regexp"
	"strings"
)

// codeBlock is the original's extraction pattern: the first fenced block,
// whatever its language tag (re.search(r"```.*?\n(.*?)```", re.DOTALL)).
// RE2's leftmost-first matching picks the same match as Python's
// backtracking for this pattern.
var codeBlock = regexp.MustCompile("(?s)```.*?\n(.*?)```")

// ExtractCode returns the body of the first fenced code block of response,
// or the whole response when it has none, as the original does.
func ExtractCode(response string) string {
	if m := codeBlock.FindStringSubmatchIndex(response); m != nil {
		return response[m[2]:m[3]]
	}
	return response
}

// reasoning matches closed reasoning sections: <think>…</think> (the
// original's remove_thinking_content) and <thinking>…</thinking>.
var reasoning = regexp.MustCompile(`(?s)<think>.*?</think>|<thinking>.*?</thinking>`)

// StripReasoning removes a reasoning model's reasoning from its reply:
// every closed <think>…</think> (and <thinking>…</thinking>) section; then,
// if a closing </think> is left (templates that put the opening tag in the
// prompt), everything up to and including the last one; then, if an opening
// <think> is left unclosed (reasoning cut off by the token limit), everything
// from it to the end. The original meant to strip <think>…</think> but, by a
// field-name slip, never did; the scorer strips explicitly.
func StripReasoning(response string) string {
	s := reasoning.ReplaceAllString(response, "")
	for _, tag := range []string{"</think>", "</thinking>"} {
		if i := strings.LastIndex(s, tag); i >= 0 {
			s = s[i+len(tag):]
		}
	}
	for _, tag := range []string{"<think>", "<thinking>"} {
		if i := strings.Index(s, tag); i >= 0 {
			s = s[:i]
		}
	}
	return s
}
