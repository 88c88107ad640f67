package schemas

// MedRubricItemTable is the table written by the medrubric dataset builder.
var MedRubricItemTable = Declare[MedRubricItem]("medrubric_item", 1)

// MedRubricItem is one QuarkMedBench-style medical query, or one multi-turn
// session, with the rubrics its answers are judged against. A session's
// turns are answered in order and each turn is scored on its own rubrics.
type MedRubricItem struct {
	// ID is the item id; unique within a version.
	ID string `parquet:"id" json:"id"`
	// Domain is the medical domain, a lower-case slug (e.g.
	// "clinical_care", "wellness", "pharmacology", "professional_inquiry").
	Domain string `parquet:"domain,dict" json:"domain"`
	// Language is the language of the query, e.g. "en" or "zh".
	Language string `parquet:"language,dict" json:"language"`
	// NumTurns is 1 for a single-turn query; NumRubrics sums the rubrics of
	// every turn.
	NumTurns   int32 `parquet:"num_turns" json:"num_turns"`
	NumRubrics int32 `parquet:"num_rubrics" json:"num_rubrics"`
	// TurnsJSON is a JSON list of MedRubricTurn, in conversation order.
	TurnsJSON string `parquet:"turns_json" json:"turns_json"`
	// SourceFile and SourceLine say where the item came from (provenance).
	SourceFile string `parquet:"source_file,dict" json:"source_file"`
	SourceLine int32  `parquet:"source_line" json:"source_line"`
}

// MedRubricTurn is one user turn of a MedRubricItem (the element type of
// TurnsJSON).
type MedRubricTurn struct {
	// User is the user's message.
	User string `json:"user"`
	// Reference is a reference answer that meets the turn's essential and
	// important rubrics and triggers no pitfall (baseline/reference answers
	// with it); empty when the source has none.
	Reference string `json:"reference,omitempty"`
	// Rubrics are the turn's rubrics; ids are unique within the item.
	Rubrics []MedRubric `json:"rubrics"`
}

// MedRubric is one rubric of a turn.
type MedRubric struct {
	ID string `json:"id"`
	// Category is essential, important, highlight or pitfall.
	Category string `json:"category"`
	// Weight is the rubric's weight: the source's, or its category's
	// default (scorers/medrubric.DefaultWeight).
	Weight float64 `json:"weight"`
	// Text is the criterion as a judge reads it.
	Text string `json:"text"`
	// Keywords are lower-case words or phrases whose presence in an answer
	// shows the rubric is met (every one of them; see
	// scorers/medrubric.KeywordsMet): what a lexical baseline judge reads.
	Keywords []string `json:"keywords,omitempty"`
	// ProposedBy names the writers (models, or people) that proposed the
	// rubric, sorted; empty for hand-written rubrics that do not say.
	ProposedBy []string `json:"proposed_by,omitempty"`
}
