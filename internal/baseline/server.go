// Package baseline serves deterministic baseline models over the OpenAI
// chat-completions HTTP API, for the demo, tests and benchmarks where no LLM
// weights are available.
//
// Models (ids as served; the gateway names them baseline/<id>):
//
//   - reference: replies with the dataset's reference answer (text and/or
//     tool calls) found through References; with no reference it replies
//     with a clearly labelled placeholder.
//   - noisy-<p>: like reference, but a share p of answers is corrupted the
//     way real models fail: a wrong argument value, a missing call, a wrong
//     function name or an extra argument for tool calls; a flipped
//     comparison, an off-by-one constant or a dropped line for code; a
//     flipped verdict for judge replies; an off-topic turn for prose.
//   - first, second: judges that always prefer answer 1 (2): they reply
//     "<choice>\n1\n</choice>" (the TRBench format) or, when the request asks
//     for JSON, a document filled from the JSON schema.
//   - echo: repeats the last user message.
//   - judge, judge-yes, judge-noisy-<p>, judge-malformed-<p>: judges that
//     answer from the request's oracle reply (the X-Benchline-Oracle header
//     the gateway sets from modelapi.Request.Oracle): verbatim, with every
//     JSON boolean true, with each boolean flipped with probability p, or
//     with probability p a reply that does not parse. Without an oracle
//     they reply with a labelled error text (see judges.go).
//   - persona, assistant, user, user-<k>: role-play models (roleplay.go):
//     an in-character floor that answers in the voice of the system
//     message, an out-of-character assistant, and a simulated user that
//     writes the request's oracle and ends after k turns.
//
// Scalar reward models, served on POST /pooling (vLLM's pooling API in its
// chat form: a conversation ending in the assistant reply to score; the
// reply is data[0].data = [score]):
//
//   - reward-reference: the agreement, in [0, 1], of the reply's tool calls
//     with the reference answer's (1 iff the same calls with the same
//     arguments); 0 when there is no reference.
//   - reward-noisy-<p>: like reward-reference, but a share p of scores is
//     replaced by a uniform draw in [0, 1).
//   - reward-length: the reply's length in characters (longer wins).
//
// Every answer is a pure function of the request body, the request seed and
// the server seed. Replies carry the X-Benchline-Baseline header, a model id
// prefixed "baseline/" and system_fingerprint "benchline-baseline"; /v1/models
// lists every model as owned_by "benchline-baseline".
//
// Faults (latency, 429 with Retry-After, 500, hangs, dropped connections)
// are injected at configured rates for tests and benchmarks.
package baseline

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
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/internal/modelapi"
)

// Owner is the owned_by of every model the server lists.
const Owner = "benchline-baseline"

// BaselineHeader is set on every response of the server.
const BaselineHeader = "X-Benchline-Baseline"

// Options configures a Server. The zero value serves placeholders with no
// faults.
type Options struct {
	// References answers baseline/reference and baseline/noisy-<p>.
	References References
	// Faults are injected into chat completions.
	Faults Faults
	// Seed varies every answer; default 0.
	Seed uint64
	// MaxContextTokens is the prompt size above which requests fail with
	// 400 context_length_exceeded; default 131072.
	MaxContextTokens int
	// Batch configures the files and batches endpoints (batch.go).
	Batch BatchOptions
	// MaxHang bounds how long an injected timeout holds a request; default 10m.
	MaxHang time.Duration
	// Logger receives one debug line per request; default discards.
	Logger *slog.Logger
}

// Stats counts what the server did. All fields are totals since start.
type Stats struct {
	Requests     int64 // chat completion and pooling (reward) requests received
	Answered     int64 // answered 200
	RateLimited  int64 // injected 429s
	ServerErrors int64 // injected 500s
	Timeouts     int64 // injected hangs
	Dropped      int64 // injected dropped connections
	BadRequests  int64 // 4xx for invalid requests
}

// Server is the baseline model server. It is an http.Handler.
type Server struct {
	opts Options
	mux  *http.ServeMux

	requests, answered, rateLimited, serverErrors, timeouts, dropped, badRequests atomic.Int64

	mu   sync.Mutex
	seen map[digest]uint32 // times each exact request was received

	b *batches // the files and batches endpoints' state
}

var _ http.Handler = (*Server)(nil)

// New returns a Server.
func New(opts Options) (*Server, error) {
	if err := opts.Faults.Validate(); err != nil {
		return nil, err
	}
	if err := opts.Batch.Validate(); err != nil {
		return nil, err
	}
	if opts.MaxContextTokens <= 0 {
		opts.MaxContextTokens = 131072
	}
	if opts.MaxHang <= 0 {
		opts.MaxHang = 10 * time.Minute
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{opts: opts, mux: http.NewServeMux(), seen: make(map[digest]uint32)}
	s.mux.HandleFunc("GET /v1/models", s.models)
	s.mux.HandleFunc("POST /v1/chat/completions", s.chat)
	s.mux.HandleFunc("POST /pooling", s.pooling)
	s.routeBatches()
	s.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	return s, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set(BaselineHeader, "true")
	s.mux.ServeHTTP(w, r)
}

// Stats returns the counters.
func (s *Server) Stats() Stats {
	return Stats{
		Requests: s.requests.Load(), Answered: s.answered.Load(), RateLimited: s.rateLimited.Load(),
		ServerErrors: s.serverErrors.Load(), Timeouts: s.timeouts.Load(), Dropped: s.dropped.Load(),
		BadRequests: s.badRequests.Load(),
	}
}

// Serve serves on ln until ctx is done, then shuts down gracefully.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = hs.Shutdown(sctx)
		case <-done:
		}
	}()
	defer close(done)
	if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("baseline: serve: %w", err)
	}
	return nil
}

// ListenAndServe listens on addr (host:port) and serves until ctx is done.
// ready, when not nil, receives the listener's address once listening.
func (s *Server) ListenAndServe(ctx context.Context, addr string, ready func(net.Addr)) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("baseline: listen: %w", err)
	}
	if ready != nil {
		ready(ln.Addr())
	}
	return s.Serve(ctx, ln)
}

// ListedModels are the ids /v1/models returns. noisy-<p> accepts any p in
// [0, 1]; the list shows common ones.
var ListedModels = []string{"reference", "noisy-0.1", "noisy-0.2", "noisy-0.5", "first", "second", "echo",
	"reward-reference", "reward-noisy-0.3", "reward-length",
	"judge", "judge-yes", "judge-noisy-0.2", "judge-malformed-0.2",
	"persona", "assistant", "user", "user-3"}

func (s *Server) models(w http.ResponseWriter, _ *http.Request) {
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	out := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{Object: "list"}
	for _, id := range ListedModels {
		out.Data = append(out.Data, model{ID: id, Object: "model", OwnedBy: Owner})
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	var req openai.ChatCompletionRequest
	if !s.decode(w, r, &req) {
		return
	}
	rd := requestDigest(&req)
	if s.injectFault(w, r, rd) {
		return
	}

	m, err := ParseModel(req.Model)
	if err != nil {
		s.fail(w, http.StatusNotFound, "invalid_request_error", "model_not_found", err.Error())
		return
	}
	if m.IsReward() {
		s.fail(w, http.StatusNotFound, "invalid_request_error", "model_not_found",
			fmt.Sprintf("baseline: %s is a reward model: it has no chat completions, score replies with POST /pooling", m.ID()))
		return
	}
	if len(req.Messages) == 0 {
		s.fail(w, http.StatusBadRequest, "invalid_request_error", "", "baseline: messages must not be empty")
		return
	}
	oracle, err := decodeOracle(r.Header.Get(modelapi.OracleHeader))
	if err != nil {
		s.fail(w, http.StatusBadRequest, "invalid_request_error", "", err.Error())
		return
	}
	if req.Stream {
		s.fail(w, http.StatusBadRequest, "invalid_request_error", "", "baseline: streaming is not supported")
		return
	}
	pt := promptTokens(&req)
	if pt > s.opts.MaxContextTokens {
		s.fail(w, http.StatusBadRequest, "invalid_request_error", "context_length_exceeded",
			fmt.Sprintf("baseline: this model's maximum context length is %d tokens, the messages have %d", s.opts.MaxContextTokens, pt))
		return
	}
	n := min(max(req.N, 1), 128)
	resp := wireResponse{
		ID:                "chatcmpl-baseline-" + rd.short(),
		Object:            "chat.completion",
		Model:             "baseline/" + m.ID(),
		SystemFingerprint: Owner,
		Usage:             wireUsage{PromptTokens: pt},
	}
	for i := range n {
		a := s.generate(&req, m, rd, i, oracle)
		msg := wireMessage{Role: openai.ChatMessageRoleAssistant}
		if a.content != "" || len(a.toolCalls) == 0 {
			msg.Content = &a.content
		}
		finish := openai.FinishReasonStop
		for j, tc := range a.toolCalls {
			msg.ToolCalls = append(msg.ToolCalls, openai.ToolCall{
				ID:       fmt.Sprintf("call_%s_%d_%d", rd.short(), i, j),
				Type:     openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: tc.Name, Arguments: string(tc.Arguments)},
			})
			finish = openai.FinishReasonToolCalls
		}
		resp.Choices = append(resp.Choices, wireChoice{Index: i, Message: msg, FinishReason: finish})
		resp.Usage.CompletionTokens += a.tokens()
	}
	resp.Usage.TotalTokens = resp.Usage.PromptTokens + resp.Usage.CompletionTokens
	s.answered.Add(1)
	s.opts.Logger.Debug("baseline answer", "model", resp.Model, "id", resp.ID, "attempt", w.Header().Get("X-Benchline-Attempt"))
	writeJSON(w, http.StatusOK, resp)
}

// The reply as OpenAI sends it (go-openai's own types would add empty
// content-filter objects).
type (
	wireResponse struct {
		ID                string       `json:"id"`
		Object            string       `json:"object"`
		Created           int64        `json:"created"`
		Model             string       `json:"model"`
		SystemFingerprint string       `json:"system_fingerprint"`
		Choices           []wireChoice `json:"choices"`
		Usage             wireUsage    `json:"usage"`
	}
	wireChoice struct {
		Index        int                 `json:"index"`
		Message      wireMessage         `json:"message"`
		FinishReason openai.FinishReason `json:"finish_reason"`
	}
	wireMessage struct {
		Role      string            `json:"role"`
		Content   *string           `json:"content"`
		ToolCalls []openai.ToolCall `json:"tool_calls,omitempty"`
	}
	wireUsage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	}
)

// decode reads the request body (at most 64 MiB) into v, or answers 400
// and returns false.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any) bool {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		s.fail(w, http.StatusBadRequest, "invalid_request_error", "", "baseline: read body: "+err.Error())
		return false
	}
	if err := json.Unmarshal(body, v); err != nil {
		s.fail(w, http.StatusBadRequest, "invalid_request_error", "", "baseline: decode request: "+err.Error())
		return false
	}
	return true
}

// injectFault draws this request's fault (the server's, or the
// X-Benchline-Faults header's) and, when one is drawn, answers with it and
// returns true. Latency is applied first, to every request.
func (s *Server) injectFault(w http.ResponseWriter, r *http.Request, rd digest) bool {
	if r.Context().Value(noFaultsKey{}) != nil {
		return false // a batch line: batches fail by BatchOptions
	}
	faults := s.opts.Faults
	if h := r.Header.Get(FaultHeader); h != "" {
		var err error
		if faults, err = ParseFaults(h); err != nil {
			s.fail(w, http.StatusBadRequest, "invalid_request_error", "", err.Error())
			return true
		}
	}
	attempt := s.attempt(rd)
	w.Header().Set("X-Benchline-Attempt", strconv.Itoa(int(attempt)))
	if faults.Latency > 0 {
		t := time.NewTimer(faults.Latency)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return true
		}
	}
	switch faults.draw(hashOf(rd, attempt, faults.Seed, "fault").uniform()) {
	case faultRateLimit:
		s.rateLimited.Add(1)
		ra := faults.RetryAfter
		if ra <= 0 {
			ra = time.Second
		}
		w.Header().Set("Retry-After", strconv.Itoa(int((ra+time.Second-1)/time.Second)))
		w.Header().Set("Retry-After-Ms", strconv.FormatInt(ra.Milliseconds(), 10))
		writeError(w, http.StatusTooManyRequests, "rate_limit_exceeded", "rate_limit_exceeded",
			"baseline: injected rate limit, retry after "+ra.String())
		return true
	case faultServerError:
		s.serverErrors.Add(1)
		writeError(w, http.StatusInternalServerError, "server_error", "", "baseline: injected server error")
		return true
	case faultTimeout:
		s.timeouts.Add(1)
		t := time.NewTimer(s.opts.MaxHang)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
		}
		writeError(w, http.StatusGatewayTimeout, "timeout", "", "baseline: injected timeout")
		return true
	case faultDrop:
		s.dropped.Add(1)
		panic(http.ErrAbortHandler) // closes the connection without a response
	}
	return false
}

// attempt returns how many times the server saw this exact request before.
func (s *Server) attempt(d digest) uint32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.seen) > 1<<20 {
		clear(s.seen)
	}
	n := s.seen[d]
	s.seen[d] = n + 1
	return n
}

func (s *Server) fail(w http.ResponseWriter, status int, typ, code, msg string) {
	s.badRequests.Add(1)
	writeError(w, status, typ, code, msg)
}

func writeError(w http.ResponseWriter, status int, typ, code, msg string) {
	e := map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}
	if code != "" {
		e["code"] = code
	}
	writeJSON(w, status, map[string]any{"error": e})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // keep "<choice>" readable on the wire
	if err := enc.Encode(v); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}
