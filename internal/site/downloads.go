package site

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"

	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/schemas"
)

// Every table of the site is downloadable as CSV and Parquet:
//
//	downloads/cells.{csv,parquet}                 the overview: every headline cell
//	downloads/bench-<dataset>.{csv,parquet}       a benchmark's table
//	downloads/comparisons-<dataset>.{csv,parquet} a benchmark's paired comparisons
//	downloads/run-<run-id>-metrics.{csv,parquet}  a run's metrics, overall and per category
//	downloads/run-<run-id>-samples.{csv,parquet}  a run's samples: verdicts, tokens, latency (texts stay in the result Parquet)
//	downloads/compare-<a>-<b>.{csv,parquet}       a compare page's per-sample diff

// CellRow is a row of downloads/cells.
type CellRow struct {
	Dataset     string  `parquet:"dataset"`
	Version     string  `parquet:"version"`
	Model       string  `parquet:"model"`
	Baseline    bool    `parquet:"baseline"`
	Metric      string  `parquet:"metric"`
	Mean        float64 `parquet:"mean"`
	CILow       float64 `parquet:"ci_low"`
	CIHigh      float64 `parquet:"ci_high"`
	N           int64   `parquet:"n"`
	StdErr      float64 `parquet:"stderr"`
	CIMethod    string  `parquet:"ci_method"`
	Clusters    int64   `parquet:"clusters"`
	RankLow     int64   `parquet:"rank_low"`
	RankHigh    int64   `parquet:"rank_high"`
	RunID       string  `parquet:"run_id"`
	TaskVersion string  `parquet:"task_version"`
}

// BenchRow is a row of downloads/bench-<dataset>.
type BenchRow struct {
	Model            string             `parquet:"model"`
	Baseline         bool               `parquet:"baseline"`
	Metric           string             `parquet:"metric"`
	Mean             float64            `parquet:"mean"`
	CILow            float64            `parquet:"ci_low"`
	CIHigh           float64            `parquet:"ci_high"`
	RankLow          int64              `parquet:"rank_low"`
	RankHigh         int64              `parquet:"rank_high"`
	Categories       map[string]float64 `parquet:"categories"`
	CostUSD          float64            `parquet:"cost_usd"`
	PromptTokens     int64              `parquet:"prompt_tokens"`
	CompletionTokens int64              `parquet:"completion_tokens"`
	LatencyP50MS     float64            `parquet:"latency_p50_ms"`
	LatencyP90MS     float64            `parquet:"latency_p90_ms"`
	Samples          int64              `parquet:"samples"`
	Scored           int64              `parquet:"scored"`
	Errors           string             `parquet:"errors"`
	Agreement        string             `parquet:"agreement"`
	Dataset          string             `parquet:"dataset"`
	Version          string             `parquet:"version"`
	TaskVersion      string             `parquet:"task_version"`
	RunID            string             `parquet:"run_id"`
	// Batch is true when the run was evaluated in batch mode: CostUSD is at
	// the providers' batch prices. Last, so the columns before it keep
	// their places.
	Batch bool `parquet:"batch"`
}

// ComparisonRow is a row of downloads/comparisons-<dataset>.
type ComparisonRow struct {
	Dataset     string  `parquet:"dataset"`
	Metric      string  `parquet:"metric"`
	ModelA      string  `parquet:"model_a"`
	ModelB      string  `parquet:"model_b"`
	RunA        string  `parquet:"run_a"`
	RunB        string  `parquet:"run_b"`
	N           int64   `parquet:"n"`
	Diff        float64 `parquet:"diff"`
	CILow       float64 `parquet:"ci_low"`
	CIHigh      float64 `parquet:"ci_high"`
	Method      string  `parquet:"method"`
	P           float64 `parquet:"p"`
	PAdjusted   float64 `parquet:"p_adjusted"`
	Correction  string  `parquet:"correction"`
	Significant bool    `parquet:"significant"`
}

// csvSafe neutralises a CSV cell a spreadsheet would run as a formula
// (OWASP, "CSV Injection"): a cell starting with =, +, -, @, a tab or a
// carriage return gets a leading single quote, so it is shown as text.
// A number (-0.25, +1e3) is left alone: it is data, not a formula. The
// Parquet downloads keep the values as they are.
func csvSafe(s string) string {
	if s == "" || !strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return s
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return s
	}
	return "'" + s
}

func f64(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

func writeTable[T any](out *output, name string, header []string, rows []T, record func(T) []string) error {
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	_ = cw.Write(header)
	for _, r := range rows {
		rec := record(r)
		for i := range rec {
			rec[i] = csvSafe(rec[i])
		}
		_ = cw.Write(rec)
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("site: csv %s: %w", name, err)
	}
	if err := out.put("downloads/"+name+".csv", buf.Bytes()); err != nil {
		return err
	}
	key := out.prefix + "downloads/" + name + ".parquet"
	w := pq.NewWriter[T](out.ctx, out.store, key, pq.Options{})
	if err := w.Write(rows); err != nil {
		w.Abort()
		return fmt.Errorf("site: %w", err)
	}
	if _, err := w.Close(); err != nil {
		return fmt.Errorf("site: %w", err)
	}
	return nil
}

func (st *site) cellRows() []CellRow {
	rows := make([]CellRow, 0, len(st.s.Cells))
	tv := map[string]string{}
	for _, b := range st.s.Benchmarks {
		tv[b.Dataset] = b.TaskVersion
	}
	for _, c := range st.s.Cells {
		t := tv[c.Dataset]
		if r, ok := st.runs[c.RunID]; ok && r.TaskVersion != "" {
			t = r.TaskVersion
		}
		rows = append(rows, CellRow{Dataset: c.Dataset, Version: c.Version, Model: c.Model, Baseline: st.isBaseline(c.Model), Metric: c.Metric,
			Mean: c.Mean, CILow: c.CILow, CIHigh: c.CIHigh, N: c.N, StdErr: c.StdErr, CIMethod: c.CIMethod, Clusters: c.Clusters,
			RankLow: int64(c.RankLow), RankHigh: int64(c.RankHigh), RunID: c.RunID, TaskVersion: t})
	}
	return rows
}

func (b *benchView) rows() []BenchRow {
	out := make([]BenchRow, 0, len(b.Rows))
	for _, r := range b.Rows {
		cats := map[string]float64{}
		for i, name := range b.Categories {
			if r.Cats[i].Has {
				cats[name] = r.Cats[i].Value
			}
		}
		s := r.Run.Summary
		out = append(out, BenchRow{Model: r.Model, Baseline: r.Baseline, Metric: r.Cell.Metric, Mean: r.Cell.Mean, CILow: r.Cell.CILow, CIHigh: r.Cell.CIHigh,
			RankLow: int64(r.Cell.RankLow), RankHigh: int64(r.Cell.RankHigh), Categories: cats, CostUSD: s.CostUSD,
			PromptTokens: s.PromptTokens, CompletionTokens: s.CompletionTokens, LatencyP50MS: s.LatencyMS.P50, LatencyP90MS: s.LatencyMS.P90,
			Samples: s.Samples, Scored: s.Scored, Errors: r.Errors, Agreement: r.Agreement, Dataset: r.Cell.Dataset, Version: r.Cell.Version,
			TaskVersion: r.TaskVersion, RunID: r.Cell.RunID, Batch: s.Batch})
	}
	return out
}

func (st *site) writeDownloads(out *output) error {
	err := writeTable(out, "cells", []string{"dataset", "version", "model", "baseline", "metric", "mean", "ci_low", "ci_high", "n", "stderr", "ci_method", "clusters", "rank_low", "rank_high", "run_id", "task_version"},
		st.cellRows(), func(c CellRow) []string {
			return []string{c.Dataset, c.Version, c.Model, strconv.FormatBool(c.Baseline), c.Metric, f64(c.Mean), f64(c.CILow), f64(c.CIHigh), strconv.FormatInt(c.N, 10),
				f64(c.StdErr), c.CIMethod, strconv.FormatInt(c.Clusters, 10), strconv.FormatInt(c.RankLow, 10), strconv.FormatInt(c.RankHigh, 10), c.RunID, c.TaskVersion}
		})
	if err != nil {
		return err
	}
	for _, b := range st.benches {
		header := []string{"model", "baseline", "metric", "mean", "ci_low", "ci_high", "rank_low", "rank_high"}
		for _, c := range b.Categories {
			header = append(header, "category:"+c)
		}
		header = append(header, "cost_usd", "prompt_tokens", "completion_tokens", "latency_p50_ms", "latency_p90_ms", "samples", "scored", "errors", "agreement", "dataset", "version", "task_version", "run_id", "batch")
		err := writeTable(out, "bench-"+b.Slug, header, b.rows(), func(r BenchRow) []string {
			rec := []string{r.Model, strconv.FormatBool(r.Baseline), r.Metric, f64(r.Mean), f64(r.CILow), f64(r.CIHigh), strconv.FormatInt(r.RankLow, 10), strconv.FormatInt(r.RankHigh, 10)}
			for _, c := range b.Categories {
				if v, ok := r.Categories[c]; ok {
					rec = append(rec, f64(v))
				} else {
					rec = append(rec, "")
				}
			}
			return append(rec, f64(r.CostUSD), strconv.FormatInt(r.PromptTokens, 10), strconv.FormatInt(r.CompletionTokens, 10), f64(r.LatencyP50MS), f64(r.LatencyP90MS),
				strconv.FormatInt(r.Samples, 10), strconv.FormatInt(r.Scored, 10), r.Errors, r.Agreement, r.Dataset, r.Version, r.TaskVersion, r.RunID, strconv.FormatBool(r.Batch))
		})
		if err != nil {
			return err
		}
		var cmps []ComparisonRow
		for _, c := range b.Comparisons {
			cmps = append(cmps, ComparisonRow{Dataset: c.Dataset, Metric: c.Metric, ModelA: c.ModelA, ModelB: c.ModelB, RunA: c.RunA, RunB: c.RunB, N: c.N,
				Diff: c.Diff, CILow: c.CILow, CIHigh: c.CIHigh, Method: c.Method, P: c.P, PAdjusted: c.PAdjusted, Correction: c.Correction, Significant: c.Significant})
		}
		err = writeTable(out, "comparisons-"+b.Slug, []string{"dataset", "metric", "model_a", "model_b", "run_a", "run_b", "n", "diff", "ci_low", "ci_high", "method", "p", "p_adjusted", "correction", "significant"},
			cmps, func(c ComparisonRow) []string {
				return []string{c.Dataset, c.Metric, c.ModelA, c.ModelB, c.RunA, c.RunB, strconv.FormatInt(c.N, 10), f64(c.Diff), f64(c.CILow), f64(c.CIHigh), c.Method,
					f64(c.P), f64(c.PAdjusted), c.Correction, strconv.FormatBool(c.Significant)}
			})
		if err != nil {
			return err
		}
	}
	return nil
}

// SampleRow is a row of downloads/run-<run-id>-samples.
type SampleRow struct {
	SampleID         string   `parquet:"sample_id"`
	SampleIndex      int64    `parquet:"sample_index"`
	Category         string   `parquet:"category"`
	Score            *float64 `parquet:"score,optional"` // the headline metric; null when not scored
	ErrorClass       string   `parquet:"error_class"`
	PromptTokens     int64    `parquet:"prompt_tokens"`
	CompletionTokens int64    `parquet:"completion_tokens"`
	CostUSD          float64  `parquet:"cost_usd"`
	LatencyMS        float64  `parquet:"latency_ms"`
}

// PairRow is a row of downloads/compare-<a>-<b>.
type PairRow struct {
	SampleID    string   `parquet:"sample_id"`
	SampleIndex int64    `parquet:"sample_index"`
	Category    string   `parquet:"category"`
	A           *float64 `parquet:"a,optional"`
	B           *float64 `parquet:"b,optional"`
	Diff        *float64 `parquet:"diff,optional"`
	ErrorA      string   `parquet:"error_a"`
	ErrorB      string   `parquet:"error_b"`
}

func optText(x *float64) string {
	if x == nil {
		return ""
	}
	return f64(*x)
}

func writeSamples(out *output, run string, rows []SampleRow) error {
	return writeTable(out, "run-"+run+"-samples", []string{"sample_id", "sample_index", "category", "score", "error_class", "prompt_tokens", "completion_tokens", "cost_usd", "latency_ms"},
		rows, func(r SampleRow) []string {
			return []string{r.SampleID, strconv.FormatInt(r.SampleIndex, 10), r.Category, optText(r.Score), r.ErrorClass,
				strconv.FormatInt(r.PromptTokens, 10), strconv.FormatInt(r.CompletionTokens, 10), f64(r.CostUSD), f64(r.LatencyMS)}
		})
}

func writeMetrics(out *output, run string, rows []schemas.SummaryRow) error {
	return writeTable(out, "run-"+run+"-metrics", []string{"run_id", "dataset", "model", "scope", "metric", "n", "mean", "stderr", "ci_low", "ci_high", "ci_method"},
		rows, func(r schemas.SummaryRow) []string {
			return []string{r.RunID, r.Dataset, r.Model, r.Scope, r.Metric, strconv.FormatInt(r.N, 10), f64(r.Mean), f64(r.StdErr), f64(r.CILow), f64(r.CIHigh), r.CIMethod}
		})
}

func writePairs(out *output, name string, rows []PairRow) error {
	return writeTable(out, name, []string{"sample_id", "sample_index", "category", "a", "b", "diff", "error_a", "error_b"},
		rows, func(r PairRow) []string {
			return []string{r.SampleID, strconv.FormatInt(r.SampleIndex, 10), r.Category, optText(r.A), optText(r.B), optText(r.Diff), r.ErrorA, r.ErrorB}
		})
}
