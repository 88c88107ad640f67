package trbench_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/benchline/benchline/datasets"
	dtrbench "github.com/benchline/benchline/datasets/trbench"
	"github.com/benchline/benchline/internal/baseline"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/gateway"
	"github.com/benchline/benchline/internal/modelapi"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/scorers"
	"github.com/benchline/benchline/scorers/trbench"
)

// rewarder is a fake reward model: score(reply) for the last message.
type rewarder struct {
	judge
	score   func(reply string) (float64, error)
	rewards int
}

func (r *rewarder) Reward(_ context.Context, req modelapi.RewardRequest) (modelapi.RewardResponse, error) {
	r.rewards++
	last := req.Messages[len(req.Messages)-1]
	if last.Role != "assistant" || req.Messages[0].Role != "system" {
		return modelapi.RewardResponse{}, fmt.Errorf("conversation %+v does not end in the reply", req.Messages)
	}
	s, err := r.score(last.Content)
	return modelapi.RewardResponse{Score: s, Usage: modelapi.Usage{PromptTokens: 50}}, err
}

func scalarSample(id, chosen, rejected string) scorers.Sample {
	chat, _ := json.Marshal([]trbench.Message{{Role: "system", Content: "tools"}, {Role: "user", Content: "question " + id}})
	r := &schemas.TRBenchPair{PairID: id, TaskSource: "simple_python", ChatHistoryJSON: string(chat),
		ChosenResponse: chosen, RejectResponse: rejected, ChosenResponseFrom: "ground truth",
		PromptOrder1: "p1 " + id, GroundTruthOrder1: "1", PromptOrder2: "p2 " + id, GroundTruthOrder2: "2"}
	return scorers.Sample{ID: id, Category: r.TaskSource, Row: r}
}

func TestScalarRewardPath(t *testing.T) {
	scores := map[string]float64{"good": 2.5, "bad": -1, "same-a": 0.3, "same-b": 0.3, "better": 9}
	for _, tc := range []struct {
		chosen, rejected string
		correct, tie     bool
	}{
		{"good", "bad", true, false},
		{"bad", "good", false, false},
		{"same-a", "same-b", false, true}, // ties are wrong
		{"better", "good", true, false},
	} {
		t.Run(tc.chosen+" vs "+tc.rejected, func(t *testing.T) {
			rw := &rewarder{score: func(reply string) (float64, error) { return scores[reply], nil }}
			env := scorers.Env{Models: rw, Model: "rm/x", ModelKind: modelapi.ModelReward}
			o, err := trbench.Task{}.Evaluate(context.Background(), env, scalarSample("p", tc.chosen, tc.rejected))
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]float64{"w_avg": 0, "acc_order1": 0, "acc_order2": 0, "avg": 0}
			if tc.correct {
				want = map[string]float64{"w_avg": 1, "acc_order1": 1, "acc_order2": 1, "avg": 1}
			}
			if fmt.Sprint(o.Metrics) != fmt.Sprint(want) {
				t.Errorf("metrics %v, want %v", o.Metrics, want)
			}
			// One physical pair, scored once: two reward calls, no completion.
			if rw.rewards != 2 || rw.calls != 0 || o.Usage.Calls != 2 || o.Usage.PromptTokens != 100 {
				t.Errorf("%d reward calls, %d completions, usage %+v", rw.rewards, rw.calls, o.Usage)
			}
			sc := o.Details.(map[string]any)["scores"].(trbench.Scores)
			if sc.Chosen != scores[tc.chosen] || sc.Rejected != scores[tc.rejected] || sc.Tie != tc.tie || sc.Correct != tc.correct ||
				sc.Margin != scores[tc.chosen]-scores[tc.rejected] {
				t.Errorf("details %+v", sc)
			}
			if o.ModelError != "" || !strings.Contains(o.Response, "chosen") {
				t.Errorf("model error %q, response %q", o.ModelError, o.Response)
			}
		})
	}
}

func TestScalarRewardErrors(t *testing.T) {
	ctx := context.Background()
	env := func(m scorers.Completer) scorers.Env {
		return scorers.Env{Models: m, Model: "rm/x", ModelKind: modelapi.ModelReward}
	}
	// A gateway error keeps its class and names the sample and the reply.
	fail := &rewarder{score: func(reply string) (float64, error) {
		if reply == "bad" {
			return 0, &gateway.Error{Class: gateway.ClassContextLength, Model: "rm/x", Message: "too long"}
		}
		return 1, nil
	}}
	_, err := trbench.Task{}.Evaluate(ctx, env(fail), scalarSample("pair-7", "good", "bad"))
	if err == nil || !strings.Contains(err.Error(), "sample pair-7: score the rejected reply") || !gateway.IsModelFailure(err) {
		t.Errorf("err = %v (model failure %v)", err, gateway.IsModelFailure(err))
	}
	malformed := &rewarder{score: func(string) (float64, error) {
		return 0, &gateway.Error{Class: gateway.ClassServer, Model: "rm/x", Message: "malformed reward response: data[0].data: score is null (NaN or infinite on the server)"}
	}}
	_, err = trbench.Task{}.Evaluate(ctx, env(malformed), scalarSample("pair-8", "good", "bad"))
	if err == nil || !strings.Contains(err.Error(), "sample pair-8: score the chosen reply") || !strings.Contains(err.Error(), "NaN") ||
		gateway.ClassOf(err) != gateway.ClassServer {
		t.Errorf("err = %v", err)
	}
	// A row whose chat history does not decode is a bad sample.
	s := scalarSample("pair-9", "good", "bad")
	s.Row.(*schemas.TRBenchPair).ChatHistoryJSON = "{"
	if _, err := (trbench.Task{}).Evaluate(ctx, env(fail), s); !errors.Is(err, scorers.ErrBadSample) || !strings.Contains(err.Error(), "pair-9") {
		t.Errorf("err = %v, want a bad sample", err)
	}
	// A model client without Reward cannot evaluate a reward model.
	if _, err := (trbench.Task{}).Evaluate(ctx, env(&judge{}), scalarSample("pair-10", "good", "bad")); err == nil || !strings.Contains(err.Error(), "no Reward") {
		t.Errorf("err = %v", err)
	}
}

// TestBaselineRewardModelsOnFixture evaluates the baseline reward models on
// the trbench fixture over real HTTP: the references the engine would write
// (Task.References) are served by the baseline server, and the gateway
// calls its /pooling endpoint. baseline/reward-reference is right on every
// pair; the weaker baselines are not.
func TestBaselineRewardModelsOnFixture(t *testing.T) {
	ctx := context.Background()
	store := blobtest.NewMemory()
	denv := datasets.Env{Store: store}
	plan, err := dtrbench.Builder{}.Plan(ctx, denv, datasets.Request{Source: dtrbench.Embedded})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := dtrbench.Build(ctx, denv, plan.Sources, plan.Params)
	if err != nil {
		t.Fatal(err)
	}
	refs := baseline.NewMemoryReferences()
	var samples []scorers.Sample
	for i := range rows {
		s := scorers.Sample{ID: rows[i].PairID, Category: rows[i].TaskSource, Row: &rows[i]}
		samples = append(samples, s)
		for _, r := range (trbench.Task{}).References(s) {
			br := baseline.Reference{Content: r.Content}
			if r.Reward {
				refs.AddReward(r.Messages, br) // as internal/app.StoreReferences loads them
			} else {
				refs.Add(r.Messages, br)
			}
		}
	}
	srv, err := baseline.New(baseline.Options{References: refs})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	cfg, err := gateway.LoadConfig(nil, gateway.WithBaselineURL(hs.URL+"/v1", nil))
	if err != nil {
		t.Fatal(err)
	}
	g, err := gateway.New(gateway.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	var totals modelapi.Totals
	mean := func(model string) (float64, map[string]float64) {
		env := scorers.Env{Models: g, Model: model, ModelKind: g.Kind(model)}
		sum, bySource, n := 0.0, map[string]float64{}, map[string]float64{}
		for _, s := range samples {
			o, err := trbench.Task{}.Evaluate(ctx, env, s)
			if err != nil {
				t.Fatalf("%s: %v", model, err)
			}
			totals.Merge(o.Usage)
			sum += o.Metrics["w_avg"]
			bySource[s.Category] += o.Metrics["w_avg"]
			n[s.Category]++
		}
		for k := range bySource {
			bySource[k] /= n[k]
		}
		return sum / float64(len(samples)), bySource
	}
	ref, bySource := mean("baseline/reward-reference")
	if ref != 1 {
		t.Errorf("baseline/reward-reference: w_avg %v, want 1", ref)
	}
	if len(bySource) != 4 {
		t.Errorf("sources %v", bySource)
	}
	for src, v := range bySource {
		if v != 1 {
			t.Errorf("baseline/reward-reference: %s w_avg %v", src, v)
		}
	}
	for _, weak := range []string{"baseline/reward-length", "baseline/reward-noisy-0.5"} {
		if got, _ := mean(weak); got >= ref {
			t.Errorf("%s: w_avg %v, want below reward-reference's %v", weak, got, ref)
		} else {
			t.Logf("%s: w_avg %v", weak, got)
		}
	}
	// The chat references served by the same server still make the
	// generative reference judge right in both orders.
	if got, _ := mean("baseline/reference"); got != 1 {
		t.Errorf("baseline/reference judge: w_avg %v, want 1", got)
	}
	// Two calls per pair and model; pairs sharing a reply (an item's
	// ground truth) read its score from the cache.
	if st := srv.Stats(); totals.Calls != 2*int64(len(samples))*4 || st.Answered != totals.Calls-totals.CacheHits || totals.CacheHits == 0 {
		t.Errorf("server answered %d requests for %+v", st.Answered, totals)
	}
}
