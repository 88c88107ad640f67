package medrubric

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/judge"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/scorers"
)

// Dataset is the dataset the task evaluates.
const Dataset = "medrubric"

// Roles of a run's judges (runs.Request.Judges, --judge ROLE=MODEL[,MODEL…]):
// judge.RoleJudge's; see judge.RolesOf.
const (
	// RoleJudge is the rubric judge: one model, or a panel.
	RoleJudge = judge.RoleJudge
	// RoleProposer and RoleChecker turn on the information-asymmetric
	// mode: the proposer (one model) splits the answer into claims, the
	// checker (one model, or a panel) decides each rubric from the claims
	// alone.
	RoleProposer = judge.RoleProposer
	RoleChecker  = judge.RoleChecker
)

// DefaultJudge judges a run that names no judge: the baseline judge, which
// answers with the keyword rule's verdict (the task's oracle).
const DefaultJudge = "baseline/judge"

// The metric sets. The headline set judges the whole answer; the limited
// set judges the answer cut at the word limit; the asymmetric set is the
// checker's, from the proposer's claims. Set names are also the Set of the
// panel ratings stored in the details.
const (
	SetScore   = "score"
	SetLimited = "score_limited"
	SetAsym    = "score_asym"
)

// Metric names beyond MetricNames.
const (
	// MetricJudgeErrorRate is the share of the panel judges' rubric
	// verdicts that are judge errors (no label), over every turn.
	MetricJudgeErrorRate = "judge_error_rate"
	// MetricPanelUnanimous is the share of rubrics that at least two
	// judges labelled on which they all agreed; reported for panels.
	MetricPanelUnanimous = "panel_unanimous"
)

// suffixed are the metrics the limited and asymmetric sets report, with
// the suffix "_limited" or "_asym".
var suffixed = []string{MetricScore, MetricAccuracy, MetricCoverage, MetricRiskInterception}

// ErrRoles is returned (wrapped) for judge roles the task cannot run.
var ErrRoles = judge.ErrRoles

// Task evaluates a model on medrubric items: the model answers each query
// (each turn of a session, with the session so far), a judge or a panel of
// judges decides every rubric of the turn in one call per judge, and Score
// turns the verdicts into metrics; a session's turns are combined by
// Session. The sample category is the item's domain. See
// docs/benchmarks/medrubric.md.
type Task struct {
	// Config is the scoring configuration; the zero value means
	// DefaultConfig.
	Config Config
	// WordLimit is the limited set's word limit; 0 means DefaultWordLimit.
	WordLimit int
}

var (
	_ scorers.Task                   = Task{}
	_ scorers.MultiReferenceProvider = Task{}
)

func (t Task) config() Config {
	if t.Config == (Config{}) {
		return DefaultConfig()
	}
	return t.Config
}

func (t Task) wordLimit() int {
	if t.WordLimit <= 0 {
		return DefaultWordLimit
	}
	return t.WordLimit
}

// taskVersion changes whenever scoring or a prompt changes.
const taskVersion = "1"

func (Task) Dataset() string { return Dataset }

// Version is the task's version, with the configuration when it is not
// the default, so that runs scored differently have different run ids.
func (t Task) Version() string {
	c, n := t.config(), t.wordLimit()
	if c == DefaultConfig() && n == DefaultWordLimit {
		return taskVersion
	}
	return fmt.Sprintf("%s+%s-%s-%d", taskVersion, c.Breaker, strconv.FormatFloat(c.Cap, 'f', -1, 64), n)
}

// Metrics lists the metrics every scored sample may report, the headline
// first. The asymmetric set (score_asym, …) and panel_unanimous are
// reported by runs that have a checker or a panel.
func (Task) Metrics() []string {
	out := append([]string(nil), MetricNames...)
	out = append(out, MetricJudgeErrorRate)
	for _, m := range suffixed {
		out = append(out, m+"_limited")
	}
	return out
}

// ReadSamples implements scorers.Task.
func (Task) ReadSamples(ctx context.Context, store blob.Store, key string, start, n int64, fn func(scorers.Sample) error) error {
	return scorers.ReadRows(ctx, store, key, start, n,
		func(r *schemas.MedRubricItem) string { return r.ID }, func(r *schemas.MedRubricItem) string { return r.Domain }, fn)
}

// turnsOf decodes a sample's turns; a row that breaks the schema wraps
// scorers.ErrBadSample.
func turnsOf(s scorers.Sample) ([]schemas.MedRubricTurn, error) {
	r, ok := s.Row.(*schemas.MedRubricItem)
	if !ok {
		return nil, fmt.Errorf("medrubric: sample %s: row is %T: %w", s.ID, s.Row, scorers.ErrBadSample)
	}
	var turns []schemas.MedRubricTurn
	if err := json.Unmarshal([]byte(r.TurnsJSON), &turns); err != nil {
		return nil, fmt.Errorf("medrubric: sample %s: turns: %v: %w", s.ID, err, scorers.ErrBadSample)
	}
	if len(turns) == 0 {
		return nil, fmt.Errorf("medrubric: sample %s: no turns: %w", s.ID, scorers.ErrBadSample)
	}
	for i, t := range turns {
		if t.User == "" || len(t.Rubrics) == 0 {
			return nil, fmt.Errorf("medrubric: sample %s: turn %d has no question or no rubric: %w", s.ID, i+1, scorers.ErrBadSample)
		}
	}
	return turns, nil
}

// Roles are a run's judges as the task uses them (judge.Roles).
type Roles = judge.Roles

// RolesOf reads the judge roles of a run (judge.RolesOf, with DefaultJudge
// when no judge is named).
func RolesOf(judges map[string]string) (Roles, error) {
	return judge.RolesOf(judges, DefaultJudge)
}

// Details is what a result row stores (details_json): every judge call's
// audit record and every verdict, so that a person can check any judged
// number.
type Details struct {
	// Ratings are the panels' labels of every rubric, for the run's
	// agreement (judge.RatingsKey).
	Ratings   []judge.Ratings `json:"panel_ratings"`
	Roles     Roles           `json:"roles"`
	Config    Config          `json:"config"`
	WordLimit int             `json:"word_limit"`
	Turns     []TurnDetails   `json:"turns"`
	// Metrics are the item's metrics by set (a session's from Session).
	Metrics map[string]Metrics `json:"metrics"`
}

// TurnDetails is one turn's answer and judgements.
type TurnDetails struct {
	Turn int `json:"turn"`
	// Words counts the answer's words (CountWords); Cut says the answer is
	// over the word limit, so the limited set judged it cut.
	Words int  `json:"words"`
	Cut   bool `json:"cut"`
	// Score is the judge panel's judgement of the answer.
	Score Judgement `json:"score"`
	// Limited is the judgement of the answer cut at the word limit; absent
	// when the answer is within it (the limited set then uses Score).
	Limited *Judgement `json:"limited,omitempty"`
	// Asym is the information-asymmetric judgement, in runs with a
	// proposer and a checker.
	Asym *Asym `json:"asym,omitempty"`
}

// Asym is one turn's information-asymmetric judgement: the proposer's
// claims and the checker panel's verdicts from them alone.
type Asym struct {
	Proposer JudgeRecord `json:"proposer"`
	Claims   []string    `json:"claims"`
	Checkers Judgement   `json:"checkers"`
}

// Evaluate asks the model under test every turn of the item and has the
// judges decide every rubric (see Task).
func (t Task) Evaluate(ctx context.Context, env scorers.Env, s scorers.Sample) (scorers.Outcome, error) {
	turns, err := turnsOf(s)
	if err != nil {
		return scorers.Outcome{}, err
	}
	roles, err := RolesOf(env.Judges)
	if err != nil {
		// No sample of the run can be judged; the engine has no run-level
		// check of judge roles, so every row reports it, at once and
		// without retries, as not scored.
		return scorers.Outcome{}, fmt.Errorf("%w: %w", err, scorers.ErrBadSample)
	}
	cfg, limit := t.config(), t.wordLimit()
	a := &asker{models: env.Models, seed: env.Seed, noCache: env.NoCache, cfg: cfg}
	out := scorers.Outcome{PromptHash: promptHash(turns)}
	d := Details{Roles: roles, Config: cfg, WordLimit: limit}
	var msgs []openai.ChatCompletionMessage
	var history []Exchange
	var answers []string
	for ti, turn := range turns {
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: turn.User})
		resp, err := env.Models.Complete(ctx, env.Request(msgs, nil))
		if err != nil {
			return out, fmt.Errorf("medrubric: sample %s: turn %d: %w", s.ID, ti+1, err)
		}
		out.Usage.Add(resp.Usage)
		answer := resp.Text()
		td, err := t.judgeTurn(ctx, a, roles, history, turn, answer, limit)
		if err != nil {
			return out, fmt.Errorf("medrubric: sample %s: turn %d: %w", s.ID, ti+1, err)
		}
		td.Turn = ti + 1
		d.Turns = append(d.Turns, td)
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: answer})
		history = append(history, Exchange{User: turn.User, Answer: answer})
		answers = append(answers, answer)
	}
	if err := a.deferred.Err(); err != nil {
		// A batch round: the judges' answers come with the next one.
		return out, fmt.Errorf("medrubric: sample %s: %w", s.ID, err)
	}
	out.Usage.Merge(a.usage)
	out.Metrics, d.Metrics, d.Ratings = roll(d.Turns, roles)
	out.Details = d
	out.Response = response(answers)
	return out, nil
}

// judgeTurn judges one turn's answer in every set.
func (t Task) judgeTurn(ctx context.Context, a *asker, roles Roles, history []Exchange, turn schemas.MedRubricTurn, answer string, limit int) (TurnDetails, error) {
	var td TurnDetails
	var err error
	td.Score, err = a.panel(ctx, roles.Judges, JudgePromptVersion, JudgeMessages(history, turn.User, answer, turn.Rubrics), answer, turn.Rubrics)
	if err != nil {
		return td, err
	}
	kept, words, cut := Truncate(answer, limit)
	td.Words, td.Cut = words, cut
	if cut {
		lj, err := a.panel(ctx, roles.Judges, JudgePromptVersion, JudgeMessages(history, turn.User, kept, turn.Rubrics), kept, turn.Rubrics)
		if err != nil {
			return td, err
		}
		td.Limited = &lj
	}
	if roles.Asymmetric() {
		as, err := a.asymmetric(ctx, roles, history, turn, answer)
		if err != nil {
			return td, err
		}
		td.Asym = &as
	}
	return td, nil
}

// asymmetric has the proposer split the answer into claims and the
// checker panel decide every rubric from the claims alone. When the
// proposer gives no usable reply, the checkers are not asked and every
// rubric is a judge error.
func (a *asker) asymmetric(ctx context.Context, roles Roles, history []Exchange, turn schemas.MedRubricTurn, answer string) (Asym, error) {
	var claims Claims
	rec, ok, err := a.ask(ctx, roles.Proposer, ProposerPromptVersion, ProposerMessages(turn.User, answer), ClaimsSchema, ClaimsOracle(answer), &claims)
	if err != nil {
		return Asym{}, err
	}
	as := Asym{Proposer: rec}
	if !ok {
		as.Checkers, err = noJudgement(turn.Rubrics, len(roles.Checkers), a.cfg)
		return as, err
	}
	as.Claims = claims.Claims
	earlier := make([]string, len(history))
	for i, h := range history {
		earlier[i] = h.User
	}
	as.Checkers, err = a.panel(ctx, roles.Checkers, CheckerPromptVersion, CheckerMessages(earlier, turn.User, claims.Claims, turn.Rubrics),
		strings.Join(claims.Claims, "\n"), turn.Rubrics)
	return as, err
}

// roll combines the turns into the sample's metrics (the engine's flat
// map), the metrics of each set, and the panels' ratings.
func roll(turns []TurnDetails, roles Roles) (map[string]float64, map[string]Metrics, []judge.Ratings) {
	sets := map[string][]Metrics{}
	score := judge.Ratings{Set: SetScore, Judges: roles.Judges}
	asym := judge.Ratings{Set: SetAsym, Judges: roles.Checkers}
	var errs, labels, paired, unanimous int
	for _, td := range turns {
		sets[SetScore] = append(sets[SetScore], td.Score.Metrics)
		limited := td.Score.Metrics
		if td.Limited != nil {
			limited = td.Limited.Metrics
		}
		sets[SetLimited] = append(sets[SetLimited], limited)
		for _, r := range td.Score.Rubrics {
			score.Items = append(score.Items, r.Labels)
			n := 0
			for _, l := range r.Labels {
				labels++
				if l == "" {
					errs++
				} else {
					n++
				}
			}
			if n >= 2 {
				paired++
				if r.Unanimous {
					unanimous++
				}
			}
		}
		if td.Asym != nil {
			sets[SetAsym] = append(sets[SetAsym], td.Asym.Checkers.Metrics)
			for _, r := range td.Asym.Checkers.Rubrics {
				asym.Items = append(asym.Items, r.Labels)
			}
		}
	}
	bySet := map[string]Metrics{}
	for name, ms := range sets {
		bySet[name] = Session(ms)
	}
	flat := bySet[SetScore].Map()
	if labels > 0 {
		flat[MetricJudgeErrorRate] = float64(errs) / float64(labels)
	}
	if len(roles.Judges) > 1 && paired > 0 {
		flat[MetricPanelUnanimous] = float64(unanimous) / float64(paired)
	}
	add := func(set, suffix string) {
		m := bySet[set].Map()
		for _, name := range suffixed {
			if v, ok := m[name]; ok {
				flat[name+suffix] = v
			}
		}
	}
	add(SetLimited, "_limited")
	ratings := []judge.Ratings{score}
	if roles.Asymmetric() {
		add(SetAsym, "_asym")
		ratings = append(ratings, asym)
	}
	return flat, bySet, ratings
}

// response is what the result row shows of the model's answers.
func response(answers []string) string {
	if len(answers) == 1 {
		return answers[0]
	}
	var b strings.Builder
	for i, a := range answers {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "[turn %d]\n%s\n", i+1, a)
	}
	return b.String()
}

func promptHash(turns []schemas.MedRubricTurn) string {
	users := make([]string, 0, len(turns)+1)
	for _, t := range turns {
		users = append(users, t.User)
	}
	return scorers.PromptHash(append(users, "")...) // each turn NUL-terminated
}

// References are the reference answers of every turn, as baseline/reference
// answers them: turn t's prompt is the session so far with the reference
// answers of the earlier turns. A later turn is also keyed by its question
// alone, so that a model whose earlier answer differed (baseline/noisy-<p>)
// still finds it (the server's last-user fallback). Turns without a
// reference have none.
func (Task) References(s scorers.Sample) []scorers.Reference {
	turns, err := turnsOf(s)
	if err != nil {
		return nil
	}
	refs := make([]scorers.Turn, len(turns))
	for i, t := range turns {
		refs[i] = scorers.Turn{User: t.User, Reference: t.Reference}
	}
	return scorers.TurnReferences(nil, refs)
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
