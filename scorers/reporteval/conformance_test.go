package reporteval

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/benchline/benchline/internal/shareddata"
)

// expectedPath holds the original's split of the 100 bundled reports:
// per report, in file order, {"file_id", "skipped", "sections"} with the
// sha256 of each section text. It comes from the original code, not from
// this package, so -update does not touch it (see testdata/README.md).
const expectedPath = "testdata/sections_expected.jsonl"

// report is one row of the original's report file.
type report struct {
	Topic  string `json:"topic"`
	Report string `json:"report"`
}

var (
	reportsOnce sync.Once
	reportsRaw  []byte
	reports     []report
	reportsErr  error
)

// loadReports reads shared/data/reporteval/qwen-reports.jsonl, skipping
// the test when the shared data is absent.
func loadReports(tb testing.TB) []report {
	tb.Helper()
	dir := shareddata.Require(tb, "reporteval")
	reportsOnce.Do(func() {
		reportsRaw, reportsErr = os.ReadFile(filepath.Join(dir, "qwen-reports.jsonl"))
		if reportsErr != nil {
			return
		}
		for line := range bytes.Lines(reportsRaw) {
			var r report
			if reportsErr = json.Unmarshal(line, &r); reportsErr != nil {
				return
			}
			reports = append(reports, r)
		}
	})
	if reportsErr != nil {
		tb.Fatalf("read reports: %v", reportsErr)
	}
	return reports
}

// commandInput renders reports as the command's input lines, each with
// its FileID as id.
func commandInput(tb testing.TB, reps []report) []byte {
	tb.Helper()
	var in bytes.Buffer
	for _, r := range reps {
		line, err := json.Marshal(map[string]string{"id": FileID(r.Topic), "report": r.Report})
		if err != nil {
			tb.Fatal(err)
		}
		in.Write(append(line, '\n'))
	}
	return in.Bytes()
}

type expected struct {
	FileID   string   `json:"file_id"`
	Skipped  bool     `json:"skipped"`
	Sections []string `json:"sections"`
}

func loadExpected(t *testing.T) []expected {
	t.Helper()
	f, err := os.Open(expectedPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []expected
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e expected
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("%s:%d: %v", expectedPath, len(out)+1, err)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestConformance runs every bundled report through ScoreSectionsLines, the
// command's path, and compares the skip decision and each section with the
// original's.
func TestConformance(t *testing.T) {
	reps := loadReports(t)
	want := loadExpected(t)
	if len(reps) != len(want) {
		t.Fatalf("%d reports, %d expected results", len(reps), len(want))
	}
	in := bytes.NewBuffer(commandInput(t, reps))
	var out bytes.Buffer
	if err := ScoreSectionsLines(context.Background(), in, &out); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, MaxLineBytes)
	i, sections := 0, 0
	for ; sc.Scan(); i++ {
		var got struct {
			ID       string   `json:"id"`
			Skipped  bool     `json:"skipped"`
			Sections []string `json:"sections"`
		}
		if err := json.Unmarshal(sc.Bytes(), &got); err != nil {
			t.Fatalf("output line %d: %v", i+1, err)
		}
		w := want[i]
		if got.ID != w.FileID {
			t.Errorf("report %d: id %s, expected file_id %s", i+1, got.ID, w.FileID)
			continue
		}
		if got.Skipped != w.Skipped {
			t.Errorf("report %d (%s): skipped = %v, original %v", i+1, w.FileID, got.Skipped, w.Skipped)
		}
		if len(got.Sections) != len(w.Sections) {
			t.Errorf("report %d (%s): %d sections, original %d", i+1, w.FileID, len(got.Sections), len(w.Sections))
			continue
		}
		for j, s := range got.Sections {
			sum := sha256.Sum256([]byte(s))
			if hex.EncodeToString(sum[:]) != w.Sections[j] {
				t.Errorf("report %d (%s): section %d differs from the original's: %.80q…", i+1, w.FileID, j+1, s)
			}
		}
		sections += len(got.Sections)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if i != len(want) {
		t.Fatalf("%d output lines, want %d", i, len(want))
	}
	t.Logf("%d reports, %d sections, all as the original's", i, sections)
}
