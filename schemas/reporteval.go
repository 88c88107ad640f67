package schemas

// ReportEvalTopicTable is the table written by the reporteval dataset
// builder.
var ReportEvalTopicTable = Declare[ReportEvalTopic]("reporteval_topic", 2)

// ReportEvalTopic is one DeepResearch-ReportEval topic: a research task
// for a deep-research system, with the report to score, or the reference
// report, when the build was given one.
type ReportEvalTopic struct {
	// ID is the original's report id, the hex MD5 of Topic
	// (scorers/reporteval.FileID).
	ID string `parquet:"id" json:"id"`
	// Category is the original's category_str, e.g. "Health & Medicine".
	Category string `parquet:"category,dict" json:"category"`
	// Topic is the task text, as in the topics file.
	Topic string `parquet:"topic" json:"topic"`
	// Report is the Markdown report written for Topic, from the build's
	// reports file; the task scores it instead of asking the model under
	// test for one. Null when the build had no report for the topic.
	Report *string `parquet:"report,optional" json:"report,omitempty"`
	// Reference is a report written for Topic that is not scored: what
	// baseline/reference answers when the model under test is asked for
	// a report (a build with reports=reference puts the reports file's
	// reports here instead of in Report). Null otherwise.
	Reference *string `parquet:"reference,optional" json:"reference,omitempty"`
	// SourceFile and SourceLine say where the topic came from.
	SourceFile string `parquet:"source_file,dict" json:"source_file"`
	SourceLine int32  `parquet:"source_line" json:"source_line"`
	// ReportFile and ReportLine say where the report (or the reference)
	// came from; null without one.
	ReportFile *string `parquet:"report_file,optional,dict" json:"report_file,omitempty"`
	ReportLine *int32  `parquet:"report_line,optional" json:"report_line,omitempty"`
}
