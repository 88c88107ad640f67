package schemas

// IFEvalCodeItemTable is the table written by the ifevalcode dataset builder.
var IFEvalCodeItemTable = Declare[IFEvalCodeItem]("ifevalcode_item", 1)

// IFEvalCodeItem is one IFEvalCode item: a programming question in English
// and in Chinese, a correctness test in the target language and a Python
// instruction check. Column names follow the original's JSONL fields.
type IFEvalCodeItem struct {
	// ID is the item id: the source's "id" (a string or number, as text), or
	// "<file stem>-<line>" when the source line has none.
	ID string `parquet:"id" json:"id"`
	// ProgrammingLanguage is one of python, java, cpp, csharp, typescript,
	// javascript, php, shell.
	ProgrammingLanguage string `parquet:"programming_language,dict" json:"programming_language"`
	// EnglishQuestion and ChineseQuestion are the two versions of the
	// question; the prompt is a question plus the original's fixed suffix.
	EnglishQuestion string `parquet:"english_question" json:"english_question"`
	ChineseQuestion string `parquet:"chinese_question" json:"chinese_question"`
	// CheckCorrectness is the test harness in the target language (it
	// defines check_correctness, or TestCases.checkCorrectness for Java, or
	// the class CheckCorrectness for C#). It is stored verbatim: the scorer
	// applies the original's unicode_escape decoding where the original does.
	CheckCorrectness string `parquet:"check_correctness" json:"check_correctness"`
	// CheckInstruction is Python source defining check_instruction(response),
	// which raises (exits non-zero) when the response breaks a constraint.
	CheckInstruction string `parquet:"check_instruction" json:"check_instruction"`
	// ReferenceSolution is a whole reply (a fenced code block) that passes
	// both checks; baseline/reference answers with it. Null when the source
	// has none (the original's data has none).
	ReferenceSolution *string `parquet:"reference_solution,optional" json:"reference_solution,omitempty"`
	// ConstraintsJSON is a JSON list of short tags naming the item's
	// instruction constraints (e.g. ["recursion", "no-loops"]); null when the
	// source has none (a benchline extension: the original has no tags).
	ConstraintsJSON *string `parquet:"constraints_json,optional" json:"constraints_json,omitempty"`
	// SourceFile and SourceLine say where the item came from (provenance).
	SourceFile string `parquet:"source_file,dict" json:"source_file"`
	SourceLine int32  `parquet:"source_line" json:"source_line"`
}
