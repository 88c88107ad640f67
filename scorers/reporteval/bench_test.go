package reporteval

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"testing"
)

// BenchmarkSections splits the 100 bundled reports (2.7 MB) per
// iteration, reporting reports/s and MB/s of report text. Run with
//
//	go test -run '^$' -bench . -cpu 1 ./scorers/reporteval
func BenchmarkSections(b *testing.B) {
	reps := loadReports(b)
	var size int64
	for _, r := range reps {
		size += int64(len(r.Report))
	}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		for _, r := range reps {
			Sections(r.Report)
		}
	}
	b.ReportMetric(float64(len(reps)*b.N)/b.Elapsed().Seconds(), "reports/s")
}

// BenchmarkScoreSectionsLines runs the command's path on the 100 bundled
// reports as {"id", "report"} lines: JSON decoding, splitting, encoding.
func BenchmarkScoreSectionsLines(b *testing.B) {
	reps := loadReports(b)
	var in bytes.Buffer
	for _, r := range reps {
		line, err := json.Marshal(map[string]string{"id": FileID(r.Topic), "report": r.Report})
		if err != nil {
			b.Fatal(err)
		}
		in.Write(append(line, '\n'))
	}
	b.SetBytes(int64(in.Len()))
	b.ReportAllocs()
	for b.Loop() {
		if err := ScoreSectionsLines(context.Background(), bytes.NewReader(in.Bytes()), io.Discard); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(reps)*b.N)/b.Elapsed().Seconds(), "reports/s")
}
