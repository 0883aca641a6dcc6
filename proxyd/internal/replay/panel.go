package replay

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
)

// Summary is one summary line of a panel.
type Summary struct {
	RawReduction    float64 `json:"raw_reduction"`
	BilledReduction float64 `json:"billed_reduction"`
	// The billed reduction with the reads blind edits imply (see
	// rereads).
	BilledReductionWithRereads float64 `json:"billed_reduction_with_rereads"`
	CacheHitRatio              float64 `json:"cache_hit_ratio"`
	InvalidRequests            int     `json:"invalid_requests"`
	PrefixViolations           int     `json:"prefix_violations"`
	// The hit-ratio ceilings' median and lowest value.
	HitCeiling            float64 `json:"hit_ceiling"`
	HitCeilingAtTargetRaw float64 `json:"hit_ceiling_at_target_raw"`
	// The median and lowest billed reduction at a row's worst stopping
	// point.
	WorstStop float64 `json:"worst_stop_billed_reduction"`
}

// Transcripts expands the command line's paths: a file is taken as it is;
// a directory contributes the *.jsonl files directly in it and those in
// every subagents/ directory below it (a session's subagents live in
// <session>/subagents/), in lexical order. Other files below a directory
// (licences, unrelated archives in other subdirectories) are not
// transcripts of that panel and are skipped.
func Transcripts(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("transcript %s: %w", p, err)
		}
		if !st.IsDir() {
			out = append(out, p)
			continue
		}
		var found []string
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || !strings.HasSuffix(path, ".jsonl") {
				return nil
			}
			dir := filepath.Dir(path)
			if filepath.Clean(dir) == filepath.Clean(p) || filepath.Base(dir) == "subagents" {
				found = append(found, path)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("list transcripts in %s: %w", p, err)
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("no transcripts (*.jsonl) in %s or its subagents/ directories", p)
		}
		sort.Strings(found)
		out = append(out, found...)
	}
	return out, nil
}

// RunPanel replays every transcript with the same options and returns
// their sum with one row per transcript.
func RunPanel(ctx context.Context, paths []string, opts Options) (*Report, error) {
	sum := &Report{Schema: Schema, Transcript: strings.Join(paths, ","), Median: &Summary{}, Worst: &Summary{}}
	violations, reprojections := 0, 0
	for _, path := range paths {
		rep, err := Run(ctx, path, opts, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		sum.Rows = append(sum.Rows, rep)
		sum.Requests += rep.Requests
		sum.Engaged += rep.Engaged
		sum.NewContentTokens += rep.NewContentTokens
		sum.RepairedResults += rep.RepairedResults
		sum.DroppedResults += rep.DroppedResults
		sum.SkippedLines += rep.SkippedLines
		sum.CostlierStops += rep.CostlierStops
		sum.Baseline.BlindEdits += rep.Baseline.BlindEdits
		sum.Projected.BlindEdits += rep.Projected.BlindEdits
		sum.Baseline.Rereads += rep.Baseline.Rereads
		sum.Projected.Rereads += rep.Projected.Rereads
		sum.bre.Add(rep.bre)
		sum.pre.Add(rep.pre)
		if sum.WorstStopRequest == 0 || rep.WorstStop < sum.WorstStop {
			sum.WorstStop, sum.WorstStopRequest = rep.WorstStop, rep.WorstStopRequest
		}
		sum.BudgetTokens, sum.ThresholdTokens, sum.ClientSource = rep.BudgetTokens, rep.ThresholdTokens, rep.ClientSource
		sum.bu.Add(rep.bu)
		sum.pu.Add(rep.pu)
		sum.Baseline.InvalidRequests += rep.Baseline.InvalidRequests
		sum.Projected.InvalidRequests += rep.Projected.InvalidRequests
		violations += deref(rep.Projected.PrefixViolations)
		reprojections += deref(rep.Projected.Reprojections)
		if sum.Projected.FirstInvalid == "" && rep.Projected.FirstInvalid != "" {
			sum.Projected.FirstInvalid = ShortName(path) + ": " + rep.Projected.FirstInvalid
		}
		if sum.Baseline.FirstInvalid == "" && rep.Baseline.FirstInvalid != "" {
			sum.Baseline.FirstInvalid = ShortName(path) + ": " + rep.Baseline.FirstInvalid
		}
	}
	sum.Projected.PrefixViolations, sum.Projected.Reprojections = &violations, &reprojections
	sum.totals()
	*sum.Median, *sum.Worst = summarise(sum.Rows)
	return sum, nil
}

// summarise returns, per column, the median and the worst value over the
// rows (worst: lowest reduction or hit ratio, most invalid requests or
// violations); each column may come from a different row.
func summarise(rows []*Report) (median, worst Summary) {
	if len(rows) == 0 {
		return
	}
	col := func(f func(*Report) float64) []float64 {
		v := make([]float64, len(rows))
		for i, r := range rows {
			v[i] = f(r)
		}
		slices.Sort(v)
		return v
	}
	mid := func(v []float64) float64 {
		n := len(v)
		if n%2 == 1 {
			return v[n/2]
		}
		return (v[n/2-1] + v[n/2]) / 2
	}
	raw := col(func(r *Report) float64 { return r.RawReduction })
	billed := col(func(r *Report) float64 { return r.BilledReduction })
	hit := col(func(r *Report) float64 { return r.Projected.CacheHitRatio })
	inv := col(func(r *Report) float64 { return float64(r.Projected.InvalidRequests) })
	vio := col(func(r *Report) float64 { return float64(deref(r.Projected.PrefixViolations)) })
	ceil := col(func(r *Report) float64 { return r.HitCeiling })
	ceilT := col(func(r *Report) float64 { return r.HitCeilingAtTargetRaw })
	reread := col(func(r *Report) float64 { return r.BilledReductionWithRereads })
	stop := col(func(r *Report) float64 { return r.WorstStop })
	median = Summary{mid(raw), mid(billed), mid(reread), mid(hit), int(mid(inv)), int(mid(vio)), mid(ceil), mid(ceilT), mid(stop)}
	worst = Summary{raw[0], billed[0], reread[0], hit[0], int(inv[len(inv)-1]), int(vio[len(vio)-1]), ceil[0], ceilT[0], stop[0]}
	return median, worst
}

// panelHeader names the panel table's columns.
var panelHeader = []string{"transcript", "requests", "engaged", "raw ÷", "billed ÷", "billed ÷ with re-reads", "projected hit", "baseline hit",
	"new content", "hit ceiling", fmt.Sprintf("ceiling at %.1f×", TargetRawReduction),
	"worst stop", "costlier stops", "blind edits (baseline)", "invalid", "prefix violations", "re-projections"}

// panelCells are the panel table's rows: one per transcript, then the
// median and the worst.
func (r *Report) panelCells() [][]string {
	var out [][]string
	for _, r := range r.Rows {
		out = append(out, []string{ShortName(r.Transcript), fmt.Sprint(r.Requests), fmt.Sprint(r.Engaged),
			fmt.Sprintf("%.2f×", r.RawReduction), fmt.Sprintf("%.2f×", r.BilledReduction),
			fmt.Sprintf("%.2f×", r.BilledReductionWithRereads), fmt.Sprintf("%.3f", r.Projected.CacheHitRatio), fmt.Sprintf("%.3f", r.Baseline.CacheHitRatio),
			fmt.Sprint(r.NewContentTokens), fmt.Sprintf("%.3f", r.HitCeiling), fmt.Sprintf("%.3f", r.HitCeilingAtTargetRaw),
			fmt.Sprintf("%.2f× at %d", r.WorstStop, r.WorstStopRequest), fmt.Sprint(r.CostlierStops),
			fmt.Sprintf("%d (%d)", r.Projected.BlindEdits, r.Baseline.BlindEdits),
			fmt.Sprint(r.Projected.InvalidRequests), fmt.Sprint(deref(r.Projected.PrefixViolations)), fmt.Sprint(deref(r.Projected.Reprojections))})
	}
	for _, s := range r.summaries() {
		out = append(out, []string{s.name, "", "", fmt.Sprintf("%.2f×", s.v.RawReduction), fmt.Sprintf("%.2f×", s.v.BilledReduction),
			fmt.Sprintf("%.2f×", s.v.BilledReductionWithRereads), fmt.Sprintf("%.3f", s.v.CacheHitRatio), "", "", fmt.Sprintf("%.3f", s.v.HitCeiling), fmt.Sprintf("%.3f", s.v.HitCeilingAtTargetRaw),
			fmt.Sprintf("%.2f×", s.v.WorstStop), "", "",
			fmt.Sprint(s.v.InvalidRequests), fmt.Sprint(s.v.PrefixViolations), ""})
	}
	return out
}

// notes are the lines printed under a table: what the request builder
// repaired in each transcript (see requests), so a reader knows which
// rows rest on rebuilt requests.
func (r *Report) notes() []string {
	var out []string
	for _, r := range r.Rows {
		if r.RepairedResults == 0 && r.DroppedResults == 0 && r.SkippedLines == 0 {
			continue
		}
		out = append(out, fmt.Sprintf("%s: %s", ShortName(r.Transcript), r.repairs()))
	}
	return out
}

// repairs says in words what the builder repaired in one transcript.
func (r *Report) repairs() string {
	var parts []string
	if n := r.SkippedLines; n > 0 {
		parts = append(parts, fmt.Sprintf("%d %s not parse", n, plural(n, "line does", "lines do")))
	}
	if n := r.RepairedResults; n > 0 {
		parts = append(parts, fmt.Sprintf("%d tool %s no result in the transcript, answered with an error result on both sides", n, plural(n, "call has", "calls have")))
	}
	if n := r.DroppedResults; n > 0 {
		parts = append(parts, fmt.Sprintf("%d tool %s no call before %s, left out on both sides", n, plural(n, "result answers", "results answer"), plural(n, "it", "them")))
	}
	return strings.Join(parts, "; ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// PanelTable prints one row per transcript, then the median and the
// worst, then the notes.
func (r *Report) PanelTable(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, row := range append([][]string{panelHeader}, r.panelCells()...) {
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	tw.Flush()
	if n := r.notes(); len(n) > 0 {
		fmt.Fprintf(w, "\n%s\n", strings.Join(n, "\n"))
	}
}

// Markdown prints the panel table as Markdown, the notes under it.
func (r *Report) Markdown(w io.Writer) {
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(panelHeader, " | "), " --- |"+strings.Repeat(" ---: |", len(panelHeader)-1))
	for _, row := range r.panelCells() {
		if row[1] == "" {
			row[0] = "**" + row[0] + "**"
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
	}
	if n := r.notes(); len(n) > 0 {
		fmt.Fprintf(w, "\n- %s\n", strings.Join(n, "\n- "))
	}
}

type namedSummary struct {
	name string
	v    Summary
}

func (r *Report) summaries() []namedSummary {
	if r.Median == nil || r.Worst == nil {
		return nil
	}
	return []namedSummary{{"median", *r.Median}, {"worst", *r.Worst}}
}

// ShortName names a transcript by its file name, prefixed with its session
// directory's first eight characters when it is a subagent's.
func ShortName(path string) string {
	base := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	dir := filepath.Dir(path)
	if filepath.Base(dir) == "subagents" {
		sess := filepath.Base(filepath.Dir(dir))
		if len(sess) > 8 {
			sess = sess[:8]
		}
		return sess + "/" + base
	}
	if len(base) > 8 && strings.Count(base, "-") == 4 {
		return base[:8]
	}
	return base
}
