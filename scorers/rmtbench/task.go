package rmtbench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/judge"
	"github.com/benchline/benchline/internal/modelapi"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/scorers"
)

// Dataset is the dataset the task evaluates.
const Dataset = "rmtbench"

// Roles of a run's judges (runs.Request.Judges, --judge ROLE=MODEL[,MODEL…]).
const (
	// RoleJudge scores every round: one model, or a panel.
	RoleJudge = "judge"
	// RoleUser is the simulated user of simulated dialogues: one model.
	RoleUser = "user"
)

// Defaults for a run that names no judge or no simulated user: the
// baseline judge (the task's rule) and the baseline simulated user (the
// task's deterministic user, which never ends a dialogue itself).
const (
	DefaultJudge = "baseline/judge"
	DefaultUser  = "baseline/user"
)

// ErrRoles is returned (wrapped) for judge roles the task cannot run.
var ErrRoles = errors.New("rmtbench: judge roles")

// How a dialogue ended (Details.Ended).
const (
	// EndedTurns: every fixed user turn was replayed.
	EndedTurns = "turns"
	// EndedLimit: the simulated dialogue reached its turn limit.
	EndedLimit = "max_turns"
	// EndedUser: the simulated user replied with the end marker.
	EndedUser = "user"
	// EndedUserEmpty: the simulated user replied with nothing.
	EndedUserEmpty = "user_empty"
	// EndedUserRefused: the simulated user's call was refused for its
	// request (bad request, context too long, content filter).
	EndedUserRefused = "user_refused"
)

// taskVersion changes whenever scoring or a prompt changes.
const taskVersion = "1"

// Task evaluates a model on rmtbench dialogues (see the package comment
// and docs/benchmarks/rmtbench.md). The sample category is the dialogue's
// scenario.
type Task struct{}

var (
	_ scorers.Task                   = Task{}
	_ scorers.MultiReferenceProvider = Task{}
)

func (Task) Dataset() string { return Dataset }
func (Task) Version() string { return taskVersion }

// Metrics lists the metrics a scored sample may report, the headline
// first; each of score and the dimensions is also reported per language,
// suffixed "_<language>" (e.g. score_zh).
func (Task) Metrics() []string {
	return append(append([]string{MetricScore}, dimensionNames()...), MetricJudgeErrorRate)
}

// ReadSamples implements scorers.Task.
func (Task) ReadSamples(ctx context.Context, store blob.Store, key string, start, n int64, fn func(scorers.Sample) error) error {
	return scorers.ReadRows(ctx, store, key, start, n,
		func(r *schemas.RMTBenchDialogue) string { return r.ID }, func(r *schemas.RMTBenchDialogue) string { return r.Scenario }, fn)
}

// dialogue is a decoded sample.
type dialogue struct {
	row  *schemas.RMTBenchDialogue
	char schemas.RMTCharacter
	spec schemas.RMTDialogue
	dims []Dimension
}

// decode reads a sample's row; a row that breaks the schema wraps
// scorers.ErrBadSample.
func decode(s scorers.Sample) (dialogue, error) {
	bad := func(format string, args ...any) (dialogue, error) {
		return dialogue{}, fmt.Errorf("rmtbench: sample %s: %s: %w", s.ID, fmt.Sprintf(format, args...), scorers.ErrBadSample)
	}
	r, ok := s.Row.(*schemas.RMTBenchDialogue)
	if !ok {
		return bad("row is %T", s.Row)
	}
	d := dialogue{row: r}
	if err := json.Unmarshal([]byte(r.CharacterJSON), &d.char); err != nil {
		return bad("character: %v", err)
	}
	if err := json.Unmarshal([]byte(r.DialogueJSON), &d.spec); err != nil {
		return bad("dialogue: %v", err)
	}
	for _, name := range d.spec.Dimensions {
		dim, err := ParseDimension(name)
		if err != nil {
			return bad("%v", err)
		}
		d.dims = append(d.dims, dim)
	}
	switch {
	case len(d.dims) == 0:
		return bad("no dimensions")
	case d.char.Name == "":
		return bad("the character has no name")
	case r.Language != English && r.Language != Chinese:
		return bad("language %q is not en or zh", r.Language)
	case r.Mode == schemas.RMTModeFixed && (len(d.spec.Turns) == 0 || int(r.MaxTurns) != len(d.spec.Turns)):
		return bad("a fixed dialogue with %d turns and max_turns %d", len(d.spec.Turns), r.MaxTurns)
	case r.Mode == schemas.RMTModeSimulated && (len(d.spec.Turns) > 0 || r.MaxTurns < 1 || len(d.spec.Topics) == 0):
		return bad("a simulated dialogue needs max_turns ≥ 1, topics and no fixed turns")
	case r.Mode != schemas.RMTModeFixed && r.Mode != schemas.RMTModeSimulated:
		return bad("mode %q", r.Mode)
	}
	return d, nil
}

// Roles are a run's judges as the task uses them.
type Roles struct {
	Judges []string `json:"judges"`
	User   string   `json:"user"`
}

// RolesOf reads the judge roles of a run: the judge panel (DefaultJudge
// when none is named) and the simulated user, one model (DefaultUser when
// none is named). Any other role is an error, so that a misspelt role is
// not silently ignored.
func RolesOf(judges map[string]string) (Roles, error) {
	for role := range judges {
		if role != RoleJudge && role != RoleUser {
			return Roles{}, fmt.Errorf("%w: unknown role %q (want %s or %s)", ErrRoles, role, RoleJudge, RoleUser)
		}
	}
	r := Roles{Judges: judge.Panel(judges, RoleJudge), User: DefaultUser}
	if len(r.Judges) == 0 {
		r.Judges = []string{DefaultJudge}
	}
	switch users := judge.Panel(judges, RoleUser); len(users) {
	case 0:
	case 1:
		r.User = users[0]
	default:
		return Roles{}, fmt.Errorf("%w: one simulated user, not a panel (got %s)", ErrRoles, strings.Join(users, ", "))
	}
	return r, nil
}

// Details is what a result row stores (details_json): the transcript and
// every judge and simulated-user call, so that a person can check any
// judged number and replay the dialogue.
type Details struct {
	// Character is the dialogue's character id (the dataset's
	// character_id): the cluster its dialogues share (CharacterOf).
	Character string `json:"character_id,omitempty"`
	// Ratings are the judge panel's labels ("1"–"5", "" for a judge error)
	// of every round dimension, for the run's agreement (judge.RatingsKey).
	Ratings       []judge.Ratings `json:"panel_ratings"`
	Roles         Roles           `json:"roles"`
	Mode          string          `json:"mode"`
	MaxTurns      int             `json:"max_turns"`
	PersonaPrompt string          `json:"persona_prompt_version"`
	// Ended says how the dialogue ended (EndedTurns, EndedLimit,
	// EndedUser, …); End is the simulated user's last call when it ended
	// the dialogue.
	Ended  string    `json:"ended"`
	End    *UserCall `json:"end,omitempty"`
	Rounds []Round   `json:"rounds"`
	// Dimensions are the dialogue's per-dimension roll-ups.
	Dimensions map[Dimension]DimensionStat `json:"dimensions"`
}

// Round is one round of the transcript: the user's turn, the character's
// reply, and the judges' scores of the reply.
type Round struct {
	Round int    `json:"round"`
	User  string `json:"user"`
	// UserCall is the simulated user's call that wrote User; absent for a
	// fixed turn.
	UserCall *UserCall `json:"user_call,omitempty"`
	Reply    string    `json:"reply"`
	// Stated are the preferences stated in earlier rounds (the judge sees
	// them; preference memory is asked only when there is one).
	Stated []string `json:"stated_preferences,omitempty"`
	// Judges are the panel's records, in the panel's order; Items the
	// resolved score of every dimension asked.
	Judges []JudgeRecord `json:"judges"`
	Items  []Item        `json:"items"`
}

// UserCall is the audit record of one simulated-user call.
type UserCall struct {
	Model         string `json:"model"`
	PromptVersion string `json:"prompt_version"`
	Reply         string `json:"reply"`
	// CallError is set when the call was refused for its request.
	CallError string `json:"call_error,omitempty"`
}

// JudgeRecord is one judge's answer about one round: the audit record of
// the call and what the task read from it, as medrubric records it (its
// Missing and Ignored name dimensions: asked but left out, and scored but
// not asked; CallError is a call refused for its request, a judge error
// of every dimension).
type JudgeRecord = judge.Record

// caller makes a sample's judge and simulated-user calls.
type caller struct {
	models  scorers.Completer
	seed    *int
	noCache bool
	usage   modelapi.Totals
	// deferred holds the judges' answers a batch run's pass deferred:
	// the dialogue goes on without them (judge.Deferred), so a round's
	// judges are asked with the next turn.
	deferred judge.Deferred
}

// greedy are the sampling parameters of judge and simulated-user calls.
func greedy() modelapi.Params {
	zero := float32(0)
	return modelapi.Params{Temperature: &zero}
}

// Evaluate plays the dialogue with the model under test in character and
// has the judges score every round (see Task).
func (t Task) Evaluate(ctx context.Context, env scorers.Env, s scorers.Sample) (scorers.Outcome, error) {
	d, err := decode(s)
	if err != nil {
		return scorers.Outcome{}, err
	}
	roles, err := RolesOf(env.Judges)
	if err != nil {
		// No sample of the run can be judged; as medrubric does (the
		// engine has no run-level check of judge roles), every row reports
		// it, at once and without retries, as not scored.
		return scorers.Outcome{}, fmt.Errorf("%w: %w", err, scorers.ErrBadSample)
	}
	c := &caller{models: env.Models, seed: env.Seed, noCache: env.NoCache}
	out := scorers.Outcome{PromptHash: promptHash(d.row)}
	det := Details{Character: d.row.CharacterID, Roles: roles, Mode: d.row.Mode, MaxTurns: int(d.row.MaxTurns), PersonaPrompt: PersonaPromptVersion}
	msgs := []openai.ChatCompletionMessage{PersonaMessage(d.char, d.row.Language)}
	var history []Exchange
	var userTurns []string
	for turn := 1; ; turn++ {
		if turn > int(d.row.MaxTurns) {
			det.Ended = EndedLimit
			if d.row.Mode == schemas.RMTModeFixed {
				det.Ended = EndedTurns
			}
			break
		}
		round := Round{Round: turn}
		if d.row.Mode == schemas.RMTModeFixed {
			round.User = d.spec.Turns[turn-1].User
		} else {
			call, ended, err := c.simulate(ctx, roles.User, d, history)
			if err != nil {
				return out, fmt.Errorf("rmtbench: sample %s: turn %d: simulated user: %w", s.ID, turn, err)
			}
			if ended != "" {
				det.Ended, det.End = ended, &call
				break
			}
			round.User, round.UserCall = call.Reply, &call
		}
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: round.User})
		resp, err := env.Models.Complete(ctx, env.Request(msgs, nil))
		if err != nil {
			return out, fmt.Errorf("rmtbench: sample %s: turn %d: %w", s.ID, turn, err)
		}
		out.Usage.Add(resp.Usage)
		round.Reply = resp.Text()
		stated := PreferencesStated(d.spec.Preferences, userTurns)
		if err := c.judgeRound(ctx, roles.Judges, d, stated, history, &round); err != nil {
			return out, fmt.Errorf("rmtbench: sample %s: turn %d: %w", s.ID, turn, err)
		}
		det.Rounds = append(det.Rounds, round)
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: round.Reply})
		history = append(history, Exchange{User: round.User, Reply: round.Reply})
		userTurns = append(userTurns, round.User)
	}
	if err := c.deferred.Err(); err != nil {
		// A batch round: the judges' answers come with the next one.
		return out, fmt.Errorf("rmtbench: sample %s: %w", s.ID, err)
	}
	out.Usage.Merge(c.usage)
	items := make([][]Item, len(det.Rounds))
	ratings := judge.Ratings{Set: MetricScore, Judges: roles.Judges}
	for i, r := range det.Rounds {
		items[i] = r.Items
		for _, it := range r.Items {
			labels := make([]string, len(it.Scores))
			for j, sc := range it.Scores {
				labels[j] = Label(sc)
			}
			ratings.Items = append(ratings.Items, labels)
		}
	}
	out.Metrics, det.Dimensions = Rollup(items, d.row.Language, len(roles.Judges))
	if d.row.Mode == schemas.RMTModeSimulated {
		out.Metrics[MetricUserEnded] = 0
		if det.Ended != EndedLimit {
			out.Metrics[MetricUserEnded] = 1
		}
	}
	det.Ratings = []judge.Ratings{ratings}
	out.Details = det
	out.Response = transcript(d.char.Name, history)
	return out, nil
}

// simulate asks the simulated user for its next turn. ended is the reason
// the user ended the dialogue ("" when it wrote a turn): the end marker,
// an empty reply, or a call refused for its request. Other call failures
// are returned.
func (c *caller) simulate(ctx context.Context, model string, d dialogue, history []Exchange) (UserCall, string, error) {
	call := UserCall{Model: model, PromptVersion: UserPromptVersion}
	resp, err := c.models.Complete(ctx, modelapi.Request{
		Model: model, Messages: UserMessages(d.char, d.row.Motivation, d.spec, d.row.Language, history),
		Params: greedy(), Seed: c.seed, NoCache: c.noCache, Oracle: UserOracle(d.char, d.spec, d.row.Language, history),
	})
	if err != nil {
		if !errors.Is(err, modelapi.ErrModelFailure) {
			return call, "", err
		}
		call.CallError = err.Error()
		return call, EndedUserRefused, nil
	}
	c.usage.Add(resp.Usage)
	call.Reply = strings.TrimSpace(resp.Text())
	switch {
	case strings.Contains(call.Reply, modelapi.EndOfConversation):
		return call, EndedUser, nil
	case call.Reply == "":
		return call, EndedUserEmpty, nil
	}
	return call, "", nil
}

// judgeRound asks every judge of the panel to score the round's reply on
// the dimensions asked, and resolves each dimension.
func (c *caller) judgeRound(ctx context.Context, judges []string, d dialogue, stated []schemas.RMTPreference, history []Exchange, round *Round) error {
	var dims []Dimension
	for _, dim := range d.dims {
		if dim != PreferenceMemory || len(stated) > 0 {
			dims = append(dims, dim)
		}
	}
	for _, p := range stated {
		round.Stated = append(round.Stated, p.Statement)
	}
	msgs := JudgeMessages(d.char, d.row.Motivation, stated, history, Exchange{User: round.User, Reply: round.Reply}, dims)
	oracle := JudgeOracle(OracleInput{Character: d.char, Dialogue: d.spec, Stated: stated, Reply: round.Reply, Dimensions: dims})
	scores := make([][]int, len(dims)) // dimension × judge; 0 is a judge error
	for i := range scores {
		scores[i] = make([]int, len(judges))
	}
	for ji, model := range judges {
		var reply Reply
		verdict, err := judge.Ask(ctx, c.models, judge.Request{
			Judge: model, PromptVersion: JudgePromptVersion, Messages: msgs, Schema: ReplySchema,
			Params: greedy(), Seed: c.seed, NoCache: c.noCache, Oracle: oracle,
		}, &reply)
		c.usage.Merge(verdict.Usage)
		rec := JudgeRecord{Verdict: verdict}
		switch {
		case c.deferred.Keep(err):
			// Evaluate returns it once the dialogue has gone as far as it can.
		case err != nil && !errors.Is(err, modelapi.ErrModelFailure):
			return err
		case err != nil:
			rec.CallError = err.Error()
		case !verdict.Failed():
			rec.Missing, rec.Ignored = readScores(reply, dims, scores, ji)
		}
		round.Judges = append(round.Judges, rec)
	}
	for i, dim := range dims {
		round.Items = append(round.Items, Resolve(dim, scores[i]))
	}
	return nil
}

// readScores writes judge ji's scores from its parsed reply into scores
// and returns the dimensions it left out and those it scored unasked.
func readScores(reply Reply, dims []Dimension, scores [][]int, ji int) (missing, ignored []string) {
	index := make(map[string]int, len(dims))
	for i, d := range dims {
		index[string(d)] = i
	}
	for _, s := range reply.Scores {
		i, ok := index[strings.TrimSpace(s.Dimension)]
		if !ok {
			ignored = append(ignored, s.Dimension)
			continue
		}
		scores[i][ji] = s.Score
	}
	for i, d := range dims {
		if scores[i][ji] == 0 {
			missing = append(missing, string(d))
		}
	}
	return missing, ignored
}

// transcript is what the result row shows of the dialogue.
func transcript(name string, history []Exchange) string {
	var b strings.Builder
	for i, h := range history {
		fmt.Fprintf(&b, "[user %d]\n%s\n[%s %d]\n%s\n", i+1, h.User, name, i+1, h.Reply)
	}
	return b.String()
}

func promptHash(r *schemas.RMTBenchDialogue) string {
	return scorers.PromptHash(r.ID, r.CharacterJSON, r.Motivation, r.DialogueJSON, "") // each part NUL-terminated
}

// References are the in-character replies of a fixed dialogue's turns, as
// baseline/reference and baseline/persona answer them: turn t's prompt is
// the persona and the dialogue so far with the references of the earlier
// turns. A later turn is also keyed by its user turn alone, so that a
// model whose earlier reply differed still finds it (the server's
// last-user fallback). A simulated dialogue has none: its user turns are
// written at evaluation time.
func (Task) References(s scorers.Sample) []scorers.Reference {
	d, err := decode(s)
	if err != nil || d.row.Mode != schemas.RMTModeFixed {
		return nil
	}
	turns := make([]scorers.Turn, len(d.spec.Turns))
	for i, t := range d.spec.Turns {
		turns[i] = scorers.Turn{User: t.User, Reference: t.Reference}
	}
	return scorers.TurnReferences([]openai.ChatCompletionMessage{PersonaMessage(d.char, d.row.Language)}, turns)
}

// Reference implements scorers.ReferenceProvider: the first turn's (the
// engine uses References, which gives every turn's).
func (t Task) Reference(s scorers.Sample) (scorers.Reference, bool) {
	refs := t.References(s)
	if len(refs) == 0 {
		return scorers.Reference{}, false
	}
	return refs[0], true
}

// CharacterOf is the cluster key of a result row: the character of its
// dialogue (Details.Character). A character's dialogues (both languages,
// every scenario) share its persona, so a model that plays it badly does
// so in all of them. "" for a row without details (an infrastructure
// failure) or recorded before details held the character: the sample is
// then a cluster of its own.
func CharacterOf(r schemas.ResultRow) string {
	if r.DetailsJSON == "" {
		return ""
	}
	var d struct {
		Character string `json:"character_id"`
	}
	if json.Unmarshal([]byte(r.DetailsJSON), &d) != nil {
		return ""
	}
	return d.Character
}
