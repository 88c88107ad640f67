package trbench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/judge"
	"github.com/benchline/benchline/internal/modelapi"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/scorers"
)

// Task evaluates a judge model on the trbench dataset: the model under test
// (--model) is the judge. Each row holds one pair in both orders; Evaluate
// asks the judge twice (order 1, then order 2, each a single user message
// holding the critique prompt), parses each verdict with ParseChoice, and
// reports
//
//	w_avg       1 iff both verdicts are right (TRBench's W-Avg, the headline)
//	acc_order1  1 iff the order-1 verdict is right
//	acc_order2  1 iff the order-2 verdict is right
//	avg         the mean of the two
//	consistency 1 iff the two verdicts name the same answer (position
//	            consistency, judge.PositionConsistency: "1" in order 1 is
//	            "2" in order 2); only for pairs where both verdicts parse,
//	            so its mean is the judge's consistent share. A scalar
//	            reward model sees no order and reports none.
//
// The sample category is the pair's task source (the BFCL category), so the
// run summary gives W-Avg per source. A reply without a valid verdict counts
// as wrong and is reported as the model error "unparseable".
//
// When the model under test is a scalar reward model (env.ModelKind is
// modelapi.ModelReward), Evaluate instead scores the conversation ending in
// the chosen reply and the one ending in the rejected reply, once each,
// and the pair is right iff chosen > rejected (ScalarCorrect; ties are
// wrong). A score does not depend on an answer order, so the pair is
// scored once and all four metrics are that verdict: w_avg is then
// TRBench's discriminative W-Avg (the mean over pairs), comparable with a
// judge's.
type Task struct{}

var _ scorers.Task = Task{}
var _ scorers.ReferenceProvider = Task{}

func (Task) Dataset() string { return "trbench" }
func (Task) Version() string { return "3" }
func (Task) Metrics() []string {
	return []string{"w_avg", "acc_order1", "acc_order2", "avg", "consistency"}
}

// ReadSamples implements scorers.Task.
func (Task) ReadSamples(ctx context.Context, store blob.Store, key string, start, n int64, fn func(scorers.Sample) error) error {
	return scorers.ReadRows(ctx, store, key, start, n,
		func(r *schemas.TRBenchPair) string { return r.PairID }, func(r *schemas.TRBenchPair) string { return r.TaskSource }, fn)
}

func row(s scorers.Sample) (*schemas.TRBenchPair, error) {
	r, ok := s.Row.(*schemas.TRBenchPair)
	if !ok {
		return nil, fmt.Errorf("trbench: sample %s: row is %T", s.ID, s.Row)
	}
	if r.PromptOrder1 == "" || r.PromptOrder2 == "" {
		return nil, fmt.Errorf("trbench: sample %s: a prompt is empty", s.ID)
	}
	return r, nil
}

// Messages is what is sent for one order (1 or 2) of a pair.
func Messages(r *schemas.TRBenchPair, order int) []openai.ChatCompletionMessage {
	p := r.PromptOrder1
	if order == 2 {
		p = r.PromptOrder2
	}
	return []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: p}}
}

// Verdict is the judge's answer for one order.
type Verdict struct {
	Order       int    `json:"order"`
	Choice      string `json:"choice"` // "1", "2" or "" (none)
	Parsed      string `json:"parsed"` // strict, loose or none
	GroundTruth string `json:"ground_truth"`
	Correct     bool   `json:"correct"`
}

// Evaluate asks the judge both orders and scores the verdicts, or has a
// scalar reward model score both replies.
func (Task) Evaluate(ctx context.Context, env scorers.Env, s scorers.Sample) (scorers.Outcome, error) {
	r, err := row(s)
	if err != nil {
		return scorers.Outcome{}, err
	}
	if env.ModelKind == modelapi.ModelReward {
		return evaluateScalar(ctx, env, s, r)
	}
	out := scorers.Outcome{PromptHash: promptHash(r)}
	var verdicts [2]Verdict
	var texts [2]string
	for i, gt := range []string{r.GroundTruthOrder1, r.GroundTruthOrder2} {
		resp, err := env.Models.Complete(ctx, env.Request(Messages(r, i+1), nil))
		if err != nil {
			return out, err
		}
		out.Usage.Add(resp.Usage)
		texts[i] = resp.Text()
		c, how := ParseChoice(texts[i])
		verdicts[i] = Verdict{Order: i + 1, Choice: c, Parsed: how, GroundTruth: gt, Correct: c != "" && c == gt}
	}
	a1, a2 := b2f(verdicts[0].Correct), b2f(verdicts[1].Correct)
	out.Metrics = map[string]float64{"w_avg": a1 * a2, "acc_order1": a1, "acc_order2": a2, "avg": (a1 + a2) / 2}
	pos, err := judge.PositionConsistency([]judge.SwappedPair{{Original: verdicts[0].Choice, Swapped: verdicts[1].Choice}}, "1", "2")
	if err == nil {
		out.Metrics["consistency"] = b2f(pos.Consistent == 1)
	}
	out.Response = "[order 1]\n" + texts[0] + "\n[order 2]\n" + texts[1]
	for _, v := range verdicts {
		if v.Parsed == ParsedNone {
			out.ModelError = "unparseable"
			out.ModelMsg = fmt.Sprintf("order %d: no <choice>1|2</choice> in the reply", v.Order)
			break
		}
	}
	out.Details = map[string]any{"verdicts": verdicts, "error_type": r.ErrorType, "pair_source": r.PairSource, "raw_id": r.RawID}
	return out, nil
}

// Scores are what a scalar reward model gave the two replies of a pair.
type Scores struct {
	Chosen   float64 `json:"chosen"`
	Rejected float64 `json:"rejected"`
	// Margin is Chosen - Rejected; Tie says they were equal (wrong).
	Margin  float64 `json:"margin"`
	Tie     bool    `json:"tie"`
	Correct bool    `json:"correct"`
}

// ChatMessages is the conversation of a pair (the system message listing
// the tools, then the item's messages), as sent to reward models.
func ChatMessages(r *schemas.TRBenchPair) ([]openai.ChatCompletionMessage, error) {
	var chat []Message
	if err := json.Unmarshal([]byte(r.ChatHistoryJSON), &chat); err != nil {
		return nil, err
	}
	if len(chat) == 0 {
		return nil, errors.New("empty chat history")
	}
	msgs := make([]openai.ChatCompletionMessage, len(chat))
	for i, m := range chat {
		msgs[i] = openai.ChatCompletionMessage{Role: m.Role, Content: m.Content}
	}
	return msgs, nil
}

// WithReply is chat followed by reply as the assistant's turn: what a
// reward model scores.
func WithReply(chat []openai.ChatCompletionMessage, reply string) []openai.ChatCompletionMessage {
	out := make([]openai.ChatCompletionMessage, len(chat), len(chat)+1)
	copy(out, chat)
	return append(out, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: reply})
}

// evaluateScalar scores a pair with a scalar reward model: one call for
// the chosen reply, one for the rejected one, in that order.
func evaluateScalar(ctx context.Context, env scorers.Env, s scorers.Sample, r *schemas.TRBenchPair) (scorers.Outcome, error) {
	out := scorers.Outcome{PromptHash: promptHash(r)}
	rw, ok := env.Models.(scorers.Rewarder)
	if !ok {
		return out, fmt.Errorf("trbench: sample %s: %s is a reward model, but the model client has no Reward call", s.ID, env.Model)
	}
	chat, err := ChatMessages(r)
	if err != nil {
		return out, fmt.Errorf("trbench: sample %s: chat history: %v: %w", s.ID, err, scorers.ErrBadSample)
	}
	var score [2]float64
	for i, reply := range []string{r.ChosenResponse, r.RejectResponse} {
		resp, err := rw.Reward(ctx, env.RewardRequest(WithReply(chat, reply)))
		if err != nil {
			return out, fmt.Errorf("trbench: sample %s: score the %s reply: %w", s.ID, [2]string{"chosen", "rejected"}[i], err)
		}
		out.Usage.Add(resp.Usage)
		score[i] = resp.Score
	}
	sc := Scores{Chosen: score[0], Rejected: score[1], Margin: score[0] - score[1], Tie: score[0] == score[1],
		Correct: ScalarCorrect(score[0], score[1])}
	c := b2f(sc.Correct)
	out.Metrics = map[string]float64{"w_avg": c, "acc_order1": c, "acc_order2": c, "avg": c}
	out.Response = fmt.Sprintf("[scalar reward] chosen %g, rejected %g", sc.Chosen, sc.Rejected)
	out.Details = map[string]any{"mode": "scalar", "scores": sc, "error_type": r.ErrorType, "pair_source": r.PairSource, "raw_id": r.RawID}
	return out, nil
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func promptHash(r *schemas.TRBenchPair) string {
	return scorers.PromptHash(r.PromptOrder1, r.PromptOrder2)
}

// References are the right verdicts of both orders, as the reference judge
// would give them: one per order, each keyed by that order's prompt; then
// the reward reference of the pair's conversation (the item's ground
// truth, reference_response) that the baseline reward models compare
// replies with. Rows written before reference_response existed use the
// chosen reply when it is the ground truth, else have no reward reference.
func References(s scorers.Sample) ([]scorers.Reference, bool) {
	r, err := row(s)
	if err != nil {
		return nil, false
	}
	refs := []scorers.Reference{
		{Messages: Messages(r, 1), Content: "<choice>\n" + r.GroundTruthOrder1 + "\n</choice>"},
		{Messages: Messages(r, 2), Content: "<choice>\n" + r.GroundTruthOrder2 + "\n</choice>"},
	}
	ref := r.ReferenceResponse
	if ref == "" && r.ChosenResponseFrom == "ground truth" {
		ref = r.ChosenResponse
	}
	if chat, err := ChatMessages(r); err == nil && ref != "" {
		refs = append(refs, scorers.Reference{Messages: chat, Reward: true, Content: ref})
	}
	return refs, true
}

var _ scorers.MultiReferenceProvider = Task{}

// References implements scorers.MultiReferenceProvider: the correct
// verdict for each of the two orders, so baseline/reference is a judge that
// is right in both (W-Avg 1), and the reward reference of the pair.
func (Task) References(s scorers.Sample) []scorers.Reference {
	refs, _ := References(s)
	return refs
}

// Reference implements scorers.ReferenceProvider: the order-1 verdict (the
// engine uses References, which gives both).
func (Task) Reference(s scorers.Sample) (scorers.Reference, bool) {
	refs, ok := References(s)
	if !ok {
		return scorers.Reference{}, false
	}
	return refs[0], true
}

// ItemOf is the cluster key of a result row: the BFCL item its pair was
// built from (the details' raw_id). A build keeps up to per_item pairs of
// one item (its question and tools, several rejected replies), so a judge
// that misreads the item tends to miss all of them. "" for a row without
// details or recorded before details held the item: the pair is then a
// cluster of its own.
func ItemOf(r schemas.ResultRow) string {
	if r.DetailsJSON == "" {
		return ""
	}
	var d struct {
		RawID string `json:"raw_id"`
	}
	if json.Unmarshal([]byte(r.DetailsJSON), &d) != nil {
		return ""
	}
	return d.RawID
}
