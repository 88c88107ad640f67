package schemas

// OmniClozeItemTable is the table written by the omnicloze dataset builder.
var OmniClozeItemTable = Declare[OmniClozeItem]("omnicloze_item", 1)

// Media kinds of an Omni-Cloze item: what a captioner perceives of the clip.
const (
	MediaAudio       = "audio"
	MediaVisual      = "visual"
	MediaAudioVisual = "audio-visual"
)

// OmniClozeItem is one Omni-Cloze item: a cloze passage about one media
// clip, written from the clip's reference detailed caption, with blanks
// whose options a judge fills from a model's caption alone. The media are
// referenced by URI and sha256, never copied into the table.
type OmniClozeItem struct {
	// ID is the item id; unique within a version.
	ID string `parquet:"id" json:"id"`
	// MediaKind is MediaAudio, MediaVisual or MediaAudioVisual.
	MediaKind string `parquet:"media_kind,dict" json:"media_kind"`
	// MediaURI locates the clip; MediaSHA256 is the hex sha256 of its
	// bytes; MediaType is its MIME type (e.g. "image/jpeg", "audio/wav",
	// "video/mp4").
	MediaURI    string `parquet:"media_uri" json:"media_uri"`
	MediaSHA256 string `parquet:"media_sha256" json:"media_sha256"`
	MediaType   string `parquet:"media_type,dict" json:"media_type"`
	// Domain and Subcategory are lower-case slugs (e.g. "music",
	// "live_performance").
	Domain      string `parquet:"domain,dict" json:"domain"`
	Subcategory string `parquet:"subcategory,dict" json:"subcategory"`
	// Caption is the clip's reference detailed caption: what the passage
	// was written from, and what baseline/reference answers with.
	Caption string `parquet:"caption" json:"caption"`
	// Passage is the cloze text, with the blanks marked [BLANK_1],
	// [BLANK_2], … in order.
	Passage string `parquet:"passage" json:"passage"`
	// NumBlanks is the number of blanks; BlanksJSON is a JSON list of
	// ClozeBlank, one per blank, in order.
	NumBlanks  int32  `parquet:"num_blanks" json:"num_blanks"`
	BlanksJSON string `parquet:"blanks_json" json:"blanks_json"`
	// Origin says who wrote the item: "hand-written", or the writer model.
	Origin string `parquet:"origin,dict" json:"origin"`
	// SourceFile and SourceLine say where the item (or its caption) came
	// from (provenance).
	SourceFile string `parquet:"source_file,dict" json:"source_file"`
	SourceLine int32  `parquet:"source_line" json:"source_line"`
}

// ClozeBlank is one blank of an OmniClozeItem (the element type of
// BlanksJSON).
type ClozeBlank struct {
	// Blank is the blank's number, k in [BLANK_k]; blanks are numbered 1,
	// 2, … in passage order.
	Blank int `json:"blank"`
	// Options are the content options: the answer and its distractors.
	// "Not Given" is offered besides them to every judge and is never
	// stored, nor ever the answer.
	Options []string `json:"options"`
	// Answer is the right option, one of Options.
	Answer string `json:"answer"`
}
