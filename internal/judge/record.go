package judge

// Record is one judge's answer about one text: the audit record of
// the call (prompt version, raw reply, parsed verdict, parse error) and
// what the task read from it.
type Record struct {
	Verdict Verdict `json:"verdict"`
	// Missing lists the ids (of rubrics, rounds...) the parsed reply left
	// out (each a judge error of this judge); Ignored the ids it gave that
	// name none.
	Missing []string `json:"missing,omitempty"`
	Ignored []string `json:"ignored,omitempty"`
	// CallError is set when the call itself was refused for this request
	// (bad request, context too long, content filter): a judge error of
	// every rubric, like an unparseable reply.
	CallError string `json:"call_error,omitempty"`
}
