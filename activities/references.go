package activities

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/refkey"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/scorers"
)

// ReferencesKey is where a dataset version's reference answers are kept for
// the baseline model server: JSON lines of ReferenceLine.
func ReferencesKey(dataset, version, taskVersion string) string {
	return fmt.Sprintf("references/%s/%s/task-%s.jsonl", dataset, version, taskVersion)
}

// ReferenceLine is one line of a references file: the refkey under which
// the baseline server looks the conversation up, and the answer. It is
// the "key" form of the lines baseline.MemoryReferences loads (the prompt
// itself is in the dataset, so the file holds only its hash: a tenth of
// the bytes of the conversation, and nothing to re-encode or re-hash).
type ReferenceLine struct {
	Key       string        `json:"key"`
	Reference ReferenceBody `json:"reference"`
}

// ReferenceBody is a reference's answer: reply text, tool calls or both.
type ReferenceBody struct {
	Content   string             `json:"content,omitempty"`
	ToolCalls []scorers.ToolCall `json:"tool_calls,omitempty"`
}

// ReferenceLines returns the lines of r: one under refkey.Reward of its
// messages for a reward reference; else one under refkey.Conversation,
// and for a reference keyed by the tools offered (ToolsHash) one under
// refkey.WithTools besides, which the server tries first. These are the
// keys the server computes from a request (baseline.Server's lookup).
func ReferenceLines(r scorers.Reference) []ReferenceLine {
	body := ReferenceBody{Content: r.Content, ToolCalls: r.ToolCalls}
	if r.Reward {
		return []ReferenceLine{{Key: refkey.Reward(r.Messages), Reference: body}}
	}
	conv := refkey.Conversation(r.Messages)
	if r.ToolsHash == "" {
		return []ReferenceLine{{Key: conv, Reference: body}}
	}
	withTools := refkey.WithTools(r.Messages, r.ToolsHash)
	return []ReferenceLine{{Key: withTools, Reference: body}, {Key: conv, Reference: body}}
}

// writeReferences writes the references of every sample of plan, reading
// the samples from dataset (the store with the version's manifest
// attached, catalog.Checked).
func (a *Eval) writeReferences(ctx context.Context, dataset blob.Store, task scorers.Task, refs scorers.ReferenceProvider, plan runs.Plan) error {
	key := ReferencesKey(plan.Dataset, plan.DatasetVersion, plan.TaskVersion)
	if ok, err := blob.Exists(ctx, a.Store, key); err != nil || ok {
		return err
	}
	// Stream the references into a multipart upload: a million samples'
	// references never sit in memory at once.
	pr, pw := io.Pipe()
	go func() {
		bw := bufio.NewWriterSize(pw, 1<<20)
		enc := json.NewEncoder(bw)
		var err error
		for _, f := range plan.Files {
			err = task.ReadSamples(ctx, dataset, f.Key, 0, f.Rows, func(s scorers.Sample) error {
				for _, r := range scorers.ReferencesOf(refs, s) {
					for _, l := range ReferenceLines(r) {
						if err := enc.Encode(l); err != nil {
							return err
						}
					}
				}
				return nil
			})
			if err != nil {
				break
			}
		}
		if err == nil {
			err = bw.Flush()
		}
		pw.CloseWithError(err)
	}()
	err := a.Store.Put(ctx, key, pr, -1)
	pr.CloseWithError(err) // unblock the producer if the upload failed
	return err
}
