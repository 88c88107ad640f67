package activities

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"sync"

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
// attached, catalog.Checked). One goroutine reads the samples; batches of
// them are turned into lines (the task's reference, its keys, JSON) on
// every core and written in sample order, streamed into a multipart
// upload, so a million samples' references never sit in memory at once.
func (a *Eval) writeReferences(ctx context.Context, dataset blob.Store, task scorers.Task, refs scorers.ReferenceProvider, plan runs.Plan) error {
	key := ReferencesKey(plan.Dataset, plan.DatasetVersion, plan.TaskVersion)
	if ok, err := blob.Exists(ctx, a.Store, key); err != nil || ok {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pr, pw := io.Pipe()
	// batches carries, in sample order, each batch's encoded lines as they
	// will be: a channel its encoder fills once.
	type encoded struct {
		b   []byte
		err error
	}
	batches := make(chan chan encoded, runtime.GOMAXPROCS(0)+1)
	var wg sync.WaitGroup // every goroutine below has ended when this returns
	// The reader: it starts an encoder per batch.
	wg.Go(func() {
		defer close(batches)
		var batch []scorers.Sample
		send := func() bool {
			out := make(chan encoded, 1)
			select {
			case batches <- out:
			case <-ctx.Done():
				return false
			}
			samples := batch
			wg.Go(func() {
				b, err := referenceBytes(refs, samples)
				out <- encoded{b, err}
			})
			batch = nil
			return true
		}
		for _, f := range plan.Files {
			err := task.ReadSamples(ctx, dataset, f.Key, 0, f.Rows, func(s scorers.Sample) error {
				if batch = append(batch, s); len(batch) == referenceBatch && !send() {
					return ctx.Err()
				}
				return nil
			})
			if err != nil {
				pw.CloseWithError(err)
				return
			}
		}
		if len(batch) > 0 {
			send()
		}
	})
	// The writer: it writes the batches in order.
	wg.Go(func() {
		bw := bufio.NewWriterSize(pw, 1<<20)
		for out := range batches {
			e := <-out
			err := e.err
			if err == nil {
				_, err = bw.Write(e.b)
			}
			if err != nil {
				pw.CloseWithError(err)
				cancel() // the reader stops at its next batch
				for range batches {
				}
				return
			}
		}
		pw.CloseWithError(bw.Flush())
	})
	err := a.Store.Put(ctx, key, pr, -1)
	pr.CloseWithError(err) // unblock the producers if the upload failed
	if err != nil {
		cancel()
	}
	wg.Wait()
	return err
}

// referenceBatch is how many samples one encoder turns into lines (a
// variable for tests).
var referenceBatch = 512

// referenceBytes returns the JSON lines of the references of samples; an
// answer that does not encode (tool-call arguments that are not JSON) is
// an error naming its sample.
func referenceBytes(refs scorers.ReferenceProvider, samples []scorers.Sample) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, s := range samples {
		for _, r := range scorers.ReferencesOf(refs, s) {
			for _, l := range ReferenceLines(r) {
				if err := enc.Encode(l); err != nil {
					return nil, fmt.Errorf("reference of sample %s: %w", s.ID, err)
				}
			}
		}
	}
	return buf.Bytes(), nil
}
