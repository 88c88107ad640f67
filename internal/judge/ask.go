package judge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/internal/modelapi"
)

// Completer is the model gateway as a judge sees it; scorers.Env.Models
// and datasets.Env.Models satisfy it.
type Completer interface {
	Complete(ctx context.Context, req modelapi.Request) (modelapi.Response, error)
}

// Schema asks the endpoint for schema-valid JSON (OpenAI's response_format
// json_schema). JSON is the JSON Schema document.
type Schema struct {
	Name   string
	JSON   json.RawMessage
	Strict bool
}

// Request is one question to a judge.
type Request struct {
	// Judge is the judge model, "<provider>/<model>".
	Judge string
	// PromptVersion names the prompt template that built Messages (e.g.
	// "medrubric-judge/1"); the Verdict records it.
	PromptVersion string
	Messages      []openai.ChatCompletionMessage
	// Schema, when set, is sent as the response format; nil sends none
	// (the reply is parsed tolerantly either way).
	Schema *Schema
	Params modelapi.Params
	Seed   *int
	// NoCache bypasses the gateway's response cache.
	NoCache bool
	// Oracle, when set, is the reply a deterministic oracle of the task
	// would give (modelapi.Request.Oracle): the baseline judges answer
	// from it; real providers never receive it.
	Oracle string
}

// MaxAttempts is how many times Ask asks: once, and once more when the
// first reply does not parse.
const MaxAttempts = 2

// Verdict is the audit record of one judge question, stored with the result
// so a person can check any verdict: who judged, with which prompt, what
// the judge replied and what was read from the reply.
type Verdict struct {
	// Judge is the judge model asked.
	Judge string `json:"judge"`
	// PromptVersion is the request's prompt version.
	PromptVersion string `json:"prompt_version"`
	// Reply is the raw text of the last reply (the one parsed, or the
	// second unparseable one).
	Reply string `json:"reply"`
	// Parsed is the decoded verdict re-encoded as JSON (the caller's struct
	// after strict decoding); absent when Error is set.
	Parsed json.RawMessage `json:"parsed,omitempty"`
	// Error is empty, or the parse error of the last reply: the verdict is
	// a judge error, counted and shown, never scored as a 0.
	Error string `json:"error,omitempty"`
	// Attempts is the number of calls made (1 or 2).
	Attempts int `json:"attempts"`
	// Usage sums the calls; it is not part of the stored record (the
	// sample's usage counts it).
	Usage modelapi.Totals `json:"-"`
}

// ReplyDecoder is implemented by a verdict read from a judge's reply text
// by a rule of its own rather than as a JSON object (a reply that ends
// with Y or N). Ask calls DecodeReply with the raw reply (<think> blocks
// kept, at most MaxReplyBytes); an error makes
// the reply unparseable (a judge error, asked again once, as for Decode).
type ReplyDecoder interface {
	DecodeReply(reply string) error
}

// decodeReply decodes reply into v: by v's own rule when it is a
// ReplyDecoder, else with Decode.
func decodeReply(reply string, v any) error {
	d, ok := v.(ReplyDecoder)
	if !ok {
		return Decode(reply, v)
	}
	if len(reply) > MaxReplyBytes {
		return &ParseError{Reason: fmt.Sprintf("reply is %d bytes, longer than %d", len(reply), MaxReplyBytes), Excerpt: excerpt(reply)}
	}
	if err := d.DecodeReply(reply); err != nil {
		var perr *ParseError
		if errors.As(err, &perr) {
			return err
		}
		return &ParseError{Reason: err.Error(), Excerpt: excerpt(reply)}
	}
	return nil
}

// Failed reports whether the verdict is a judge error.
func (v Verdict) Failed() bool { return v.Error != "" }

// Ask asks the judge and decodes its reply into v (see Decode). A reply that
// does not parse is asked again once, as a fresh sample (SampleIndex 1, so
// the gateway does not answer it from the cache of the first); if that one
// does not parse either, the Verdict carries the parse error and Ask returns
// a nil error: a judge error is a result, not a failure. The error is
// non-nil only when a call itself fails (the gateway's error, wrapped) or v
// is not a non-nil pointer; the Verdict then holds what was done so far.
func Ask(ctx context.Context, c Completer, req Request, v any) (Verdict, error) {
	out := Verdict{Judge: req.Judge, PromptVersion: req.PromptVersion}
	greq := modelapi.Request{
		Model: req.Judge, Messages: req.Messages, Params: req.Params, Seed: req.Seed, NoCache: req.NoCache,
		Oracle: req.Oracle,
	}
	if req.Schema != nil {
		greq.Params.ResponseFormat = &openai.ChatCompletionResponseFormat{
			Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{
				Name: req.Schema.Name, Schema: req.Schema.JSON, Strict: req.Schema.Strict,
			},
		}
	}
	for attempt := range MaxAttempts {
		greq.SampleIndex = attempt
		resp, err := c.Complete(ctx, greq)
		if err != nil {
			return out, fmt.Errorf("judge: ask %s: %w", req.Judge, err)
		}
		out.Attempts++
		out.Usage.Add(resp.Usage)
		out.Reply = resp.Text()
		err = decodeReply(out.Reply, v)
		var perr *ParseError
		if errors.As(err, &perr) {
			out.Error = perr.Error()
			continue
		}
		if err != nil {
			return out, err
		}
		parsed, err := json.Marshal(v)
		if err != nil {
			return out, fmt.Errorf("judge: encode verdict: %w", err)
		}
		out.Parsed, out.Error = parsed, ""
		return out, nil
	}
	return out, nil
}
