package wfclient

import (
	"encoding/json"
	"strings"
	"testing"

	"go.temporal.io/sdk/client"

	"github.com/benchline/benchline/internal/config"
	"github.com/benchline/benchline/internal/leaderboard"
	"github.com/benchline/benchline/internal/registry"
	"github.com/benchline/benchline/workflows"
)

func TestCalendarText(t *testing.T) {
	r := func(start, end, step int) client.ScheduleRange {
		return client.ScheduleRange{Start: start, End: end, Step: step}
	}
	tests := []struct {
		name string
		cal  client.ScheduleCalendarSpec
		want string
	}{
		{"daily at 03:00", client.ScheduleCalendarSpec{Minute: []client.ScheduleRange{r(0, 0, 0)}, Hour: []client.ScheduleRange{r(3, 0, 0)},
			DayOfMonth: []client.ScheduleRange{r(1, 31, 1)}, Month: []client.ScheduleRange{r(1, 12, 1)}, DayOfWeek: []client.ScheduleRange{r(0, 6, 1)}}, "0 3 * * *"},
		{"every 5 minutes on weekdays", client.ScheduleCalendarSpec{Minute: []client.ScheduleRange{r(0, 59, 5)},
			DayOfWeek: []client.ScheduleRange{r(1, 5, 1)}}, "*/5 * * * 1-5"},
		{"two hours", client.ScheduleCalendarSpec{Minute: []client.ScheduleRange{r(30, 30, 0)}, Hour: []client.ScheduleRange{r(6, 0, 0), r(18, 0, 0)}}, "30 6,18 * * *"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := calendarText(tc.cal); got != tc.want {
				t.Errorf("calendarText = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestReportAndStoreURI(t *testing.T) {
	cfg := config.Config{}
	cfg.S3.Bucket = "evals"
	res := workflows.RefreshLeaderboardResult{Board: "b", Stamp: "20260102T030405Z", RunsStarted: 2, RunsReused: 1, ModelCalls: 9,
		SiteKey: leaderboard.SiteKey("b", "20260102T030405Z")}
	if got := Report(cfg, res); got.Site != "s3://evals/leaderboards/b/20260102T030405Z/site/" || got.ModelCalls != 9 || got.RunsStarted != 2 || got.RunsReused != 1 {
		t.Errorf("Report = %+v", got)
	}
	// "changes" is a list: [] when nothing changed, else the refresh's.
	if b, _ := json.Marshal(Report(cfg, res)); !strings.Contains(string(b), `"changes":[]`) {
		t.Errorf("no change: %s", b)
	}
	res.Changes, res.ChangeList = "1 new model since P", []leaderboard.Change{{Kind: leaderboard.KindNewModel, Dataset: "bfcl", Model: "baseline/reference"}}
	b, _ := json.Marshal(Report(cfg, res))
	if !strings.Contains(string(b), `"changes":[{"kind":"new_model","dataset":"bfcl","model":"baseline/reference"}],"changes_summary":"1 new model since P"`) {
		t.Errorf("Report printed %s", b)
	}
	cfg.S3.Prefix = "/team/"
	if got := StoreURI(cfg, "runs/"); got != "s3://evals/team/runs/" {
		t.Errorf("StoreURI with a prefix = %q", got)
	}
}

// TestCheckBoardNamesTheFileAndKey: a board's unknown provider and
// unknown baseline model are refused as `benchline eval` refuses them,
// naming the board file and the key.
func TestCheckBoardNamesTheFileAndKey(t *testing.T) {
	b, err := leaderboard.ParseBoard("nightly.yaml", []byte(`name: n
benchmarks: [{dataset: medrubric}]
models: [baseline/reference, baseline/noisy-0.3]
judges: {judge: "baseline/judge,nosuch/judge-x"}
`), registry.Default())
	if err != nil {
		t.Fatal(err)
	}
	err = CheckBoard(config.Default(), b)
	if err == nil || !strings.Contains(err.Error(), `nightly.yaml: benchmarks[0].judges.judge "nosuch/judge-x": unknown provider "nosuch"`) {
		t.Fatalf("err = %v", err)
	}
	b.Benchmarks[0].Judges = nil
	b.Models[1].Model = "baseline/not-a-baseline"
	err = CheckBoard(config.Default(), b)
	if err == nil || !strings.Contains(err.Error(), `nightly.yaml: models[1] "baseline/not-a-baseline": baseline: unknown model "not-a-baseline" (want reference,`) {
		t.Fatalf("err = %v", err)
	}
}
