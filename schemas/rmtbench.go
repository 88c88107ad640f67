package schemas

// RMTBenchDialogueTable is the table written by the rmtbench dataset
// builder.
var RMTBenchDialogueTable = Declare[RMTBenchDialogue]("rmtbench_dialogue", 1)

// Dialogue modes of an RMTBench dialogue.
const (
	// RMTModeFixed dialogues replay the user turns of the dataset in order.
	RMTModeFixed = "fixed"
	// RMTModeSimulated dialogues have a simulated user model write each
	// user turn from the motivation and the history, until it ends the
	// conversation or MaxTurns is reached.
	RMTModeSimulated = "simulated"
)

// RMTBenchDialogue is one RMTBench-style role-play dialogue: a character
// (its persona in one language), the user's explicit motivation, and
// either the user turns to replay or a simulated user's turn limit. The
// model under test plays the character; a judge scores every round.
type RMTBenchDialogue struct {
	// ID is the dialogue id; unique within a version.
	ID string `parquet:"id" json:"id"`
	// Language is "en" or "zh": the language of the persona, the user
	// turns and the expected replies.
	Language string `parquet:"language,dict" json:"language"`
	// Scenario is the user-intent scenario, a lower-case slug (e.g.
	// "character_understanding", "user_preference"): the sample's
	// category.
	Scenario string `parquet:"scenario,dict" json:"scenario"`
	// CharacterID names the character across languages; CharacterName is
	// its name in Language; CharacterKind is "custom" (a detailed
	// background) or "abstract" (a few traits).
	CharacterID   string `parquet:"character_id,dict" json:"character_id"`
	CharacterName string `parquet:"character_name,dict" json:"character_name"`
	CharacterKind string `parquet:"character_kind,dict" json:"character_kind"`
	// Mode is RMTModeFixed or RMTModeSimulated.
	Mode string `parquet:"mode,dict" json:"mode"`
	// MaxTurns is the number of user turns: the fixed turns' count, or the
	// simulated user's limit.
	MaxTurns int32 `parquet:"max_turns" json:"max_turns"`
	// Motivation is what the user wants from the conversation, as the
	// simulated user and the judge read it.
	Motivation string `parquet:"motivation" json:"motivation"`
	// CharacterJSON is the persona, an RMTCharacter as JSON.
	CharacterJSON string `parquet:"character_json" json:"character_json"`
	// DialogueJSON is the rest of the dialogue, an RMTDialogue as JSON.
	DialogueJSON string `parquet:"dialogue_json" json:"dialogue_json"`
	// SourceFile and SourceLine say where the dialogue came from.
	SourceFile string `parquet:"source_file,dict" json:"source_file"`
	SourceLine int32  `parquet:"source_line" json:"source_line"`
}

// RMTCharacter is a character's persona in one language (the type of
// RMTBenchDialogue.CharacterJSON).
type RMTCharacter struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Kind is "custom" or "abstract".
	Kind string `json:"kind"`
	// Background is a custom character's detailed background; Traits an
	// abstract character's few traits. Exactly one is set.
	Background string   `json:"background,omitempty"`
	Traits     []string `json:"traits,omitempty"`
	// Keywords are lower-case markers of the character's voice and world
	// (a catchphrase, a place, an object): an in-character reply holds at
	// least one of them or the name. What the baseline judges' rule reads.
	Keywords []string `json:"keywords"`
	// Forbidden are lower-case phrases this character would never say (an
	// anachronism, say), out of character like the benchmark's own list of
	// assistant phrases.
	Forbidden []string `json:"forbidden,omitempty"`
}

// RMTDialogue is a dialogue's spec beyond its columns (the type of
// RMTBenchDialogue.DialogueJSON).
type RMTDialogue struct {
	// Topics are lower-case phrases of what the user came to talk about:
	// the simulated user's material, and what a reply that serves the
	// user's intent mentions.
	Topics []string `json:"topics"`
	// Preferences are what the user tells the character about themself,
	// to be remembered in later rounds.
	Preferences []RMTPreference `json:"preferences,omitempty"`
	// Unsafe are lower-case phrases a reply must not contain (compliance
	// with a harmful request, say).
	Unsafe []string `json:"unsafe,omitempty"`
	// Dimensions are the dimensions every round is scored on, in order.
	Dimensions []string `json:"dimensions"`
	// Turns are the fixed user turns, in order; empty for a simulated
	// dialogue.
	Turns []RMTTurn `json:"turns,omitempty"`
}

// RMTPreference is one preference of the user.
type RMTPreference struct {
	// Statement is how the user states it ("I don't eat meat."); the
	// deterministic simulated user says it verbatim.
	Statement string `json:"statement"`
	// Keywords are lower-case words or phrases whose presence in a user
	// turn shows the preference was stated, and in a reply that it is
	// remembered.
	Keywords []string `json:"keywords"`
}

// RMTTurn is one fixed user turn.
type RMTTurn struct {
	User string `json:"user"`
	// Reference is an in-character reply (baseline/reference and
	// baseline/persona answer with it); empty when the source has none.
	Reference string `json:"reference,omitempty"`
}
