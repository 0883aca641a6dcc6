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
	// The billed reduction with a re-read before every blind edit, and
	// with every recovery priced (see recovery).
	BilledReductionWithRereads  float64 `json:"billed_reduction_with_rereads"`
	BilledReductionWithRecovery float64 `json:"billed_reduction_with_recovery"`
	// The session's bound and the share of it reached (see bound).
	BoundReduction        float64 `json:"bound_reduction"`
	BoundShare            float64 `json:"bound_share"`
	BoundShareWithRereads float64 `json:"bound_share_with_rereads"`
	CacheHitRatio         float64 `json:"cache_hit_ratio"`
	InvalidRequests       int     `json:"invalid_requests"`
	PrefixViolations      int     `json:"prefix_violations"`
	UserTypedHidden       int     `json:"user_typed_hidden"`
	// The hit-ratio ceilings' median and lowest value.
	HitCeiling            float64 `json:"hit_ceiling"`
	HitCeilingAtTargetRaw float64 `json:"hit_ceiling_at_target_raw"`
	// The median and lowest billed reduction at a row's worst stopping
	// point.
	WorstStop float64 `json:"worst_stop_billed_reduction"`
}

// LongSession is the number of requests from which a transcript counts as
// a long session in the panel's own summary lines (the fixtures' main
// sessions have 103–418, their subagents 1–13).
const LongSession = 50

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
		sum.brc.Add(rep.brc)
		sum.prc.Add(rep.prc)
		sum.bound += rep.bound
		sum.Baseline.Recoveries += rep.Baseline.Recoveries
		sum.Projected.Recoveries += rep.Projected.Recoveries
		sum.Baseline.HiddenThenNeeded.add(rep.Baseline.HiddenThenNeeded)
		sum.Projected.HiddenThenNeeded.add(rep.Projected.HiddenThenNeeded)
		sum.Projected.UserTypedHidden += rep.Projected.UserTypedHidden
		sum.Projected.RosterChanges += rep.Projected.RosterChanges
		if sum.Projected.FirstUserTypedHidden == "" && rep.Projected.FirstUserTypedHidden != "" {
			sum.Projected.FirstUserTypedHidden = ShortName(path) + ": " + rep.Projected.FirstUserTypedHidden
		}
		sum.SidechainRecords += rep.SidechainRecords
		sum.EditCalls += rep.EditCalls
		sum.OrphanAnswers += rep.OrphanAnswers
		if sum.WorstStopRequest == 0 || rep.WorstStop < sum.WorstStop {
			sum.WorstStop, sum.WorstStopRequest = rep.WorstStop, rep.WorstStopRequest
		}
		sum.BudgetTokens, sum.ThresholdTokens, sum.ClientSource, sum.Scope = rep.BudgetTokens, rep.ThresholdTokens, rep.ClientSource, rep.Scope
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
	var long []*Report
	for _, r := range sum.Rows {
		if r.Requests >= LongSession {
			long = append(long, r)
		}
	}
	if len(long) > 0 && len(long) < len(sum.Rows) {
		sum.LongMedian, sum.LongWorst = &Summary{}, &Summary{}
		*sum.LongMedian, *sum.LongWorst = summarise(long)
	}
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
	med := func(f func(*Report) float64) float64 { return mid(col(f)) }
	low := func(f func(*Report) float64) float64 { return col(f)[0] }
	high := func(f func(*Report) float64) float64 { v := col(f); return v[len(v)-1] }
	floats := []func(*Report) float64{
		func(r *Report) float64 { return r.RawReduction },
		func(r *Report) float64 { return r.BilledReduction },
		func(r *Report) float64 { return r.BilledReductionWithRereads },
		func(r *Report) float64 { return r.BilledReductionWithRecovery },
		func(r *Report) float64 { return r.BoundReduction },
		func(r *Report) float64 { return r.BoundShare },
		func(r *Report) float64 { return r.Projected.CacheHitRatio },
		func(r *Report) float64 { return r.HitCeiling },
		func(r *Report) float64 { return r.HitCeilingAtTargetRaw },
		func(r *Report) float64 { return r.WorstStop },
		func(r *Report) float64 { return r.BoundShareWithRereads },
	}
	counts := []func(*Report) float64{
		func(r *Report) float64 { return float64(r.Projected.InvalidRequests) },
		func(r *Report) float64 { return float64(deref(r.Projected.PrefixViolations)) },
		func(r *Report) float64 { return float64(r.Projected.UserTypedHidden) },
	}
	fill := func(f, c func(func(*Report) float64) float64) Summary {
		v := make([]float64, len(floats))
		for i, g := range floats {
			v[i] = f(g)
		}
		return Summary{RawReduction: v[0], BilledReduction: v[1], BilledReductionWithRereads: v[2],
			BilledReductionWithRecovery: v[3], BoundReduction: v[4], BoundShare: v[5], CacheHitRatio: v[6],
			HitCeiling: v[7], HitCeilingAtTargetRaw: v[8], WorstStop: v[9], BoundShareWithRereads: v[10],
			InvalidRequests: int(c(counts[0])), PrefixViolations: int(c(counts[1])), UserTypedHidden: int(c(counts[2]))}
	}
	return fill(med, med), fill(low, high)
}

// panelHeader names the panel table's columns.
var panelHeader = []string{"transcript", "requests", "engaged", "billed ÷", "billed ÷ with re-reads", "billed ÷ with recovery",
	"bound ÷", "share of bound", "share with re-reads", "blind edits (baseline)", "hidden then needed (edits/reads/commands/symbols/quotes)",
	"recovery tokens", "user-typed hidden", "invalid", "worst stop", "never costlier"}

// panelCells are the panel table's rows: one per transcript, then the
// median and the worst.
func (r *Report) panelCells() [][]string {
	x := func(v float64) string { return fmt.Sprintf("%.2f×", v) }
	var out [][]string
	for _, r := range r.Rows {
		n := r.Projected.HiddenThenNeeded
		never := "yes"
		if !r.NeverCostlier {
			never = "**no**"
		}
		out = append(out, []string{ShortName(r.Transcript), fmt.Sprint(r.Requests), fmt.Sprint(r.Engaged),
			x(r.BilledReduction), x(r.BilledReductionWithRereads), x(r.BilledReductionWithRecovery),
			x(r.BoundReduction), fmt.Sprintf("%.2f", r.BoundShare), fmt.Sprintf("%.2f", r.BoundShareWithRereads),
			fmt.Sprintf("%d (%d)", r.Projected.BlindEdits, r.Baseline.BlindEdits),
			fmt.Sprintf("%d (%d/%d/%d/%d/%d)", n.Total(), n.Edits, n.Reads, n.Commands, n.Symbols, n.Quotes),
			fmt.Sprint(n.RecoveryTokens), fmt.Sprint(r.Projected.UserTypedHidden), fmt.Sprint(r.Projected.InvalidRequests),
			fmt.Sprintf("%s at %d", x(r.WorstStop), r.WorstStopRequest), never})
	}
	for _, s := range r.summaries() {
		out = append(out, []string{s.name, "", "", x(s.v.BilledReduction), x(s.v.BilledReductionWithRereads), x(s.v.BilledReductionWithRecovery),
			x(s.v.BoundReduction), fmt.Sprintf("%.2f", s.v.BoundShare), fmt.Sprintf("%.2f", s.v.BoundShareWithRereads), "", "", "",
			fmt.Sprint(s.v.UserTypedHidden), fmt.Sprint(s.v.InvalidRequests), x(s.v.WorstStop), ""})
	}
	return out
}

// notes are the lines printed under a table: what the request builder
// repaired in each transcript (see requests), so a reader knows which
// rows rest on rebuilt requests.
func (r *Report) notes() []string {
	var out []string
	for _, r := range r.Rows {
		if r.repairs() == "" {
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
	if n := r.SidechainRecords; n > 0 {
		parts = append(parts, fmt.Sprintf("%d inline subagent %s left out of the main session's requests", n, plural(n, "record", "records")))
	}
	if n := r.OrphanAnswers; n > 0 {
		parts = append(parts, fmt.Sprintf("%d %s no user turn before %s in the file (a continued session), sent after a placeholder user message on both sides", n, plural(n, "answer has", "answers have"), plural(n, "it", "them")))
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
	out := []namedSummary{{"median", *r.Median}, {"worst", *r.Worst}}
	if r.LongMedian != nil && r.LongWorst != nil {
		long := fmt.Sprintf(" (%d requests or more)", LongSession)
		out = append(out, namedSummary{"median" + long, *r.LongMedian}, namedSummary{"worst" + long, *r.LongWorst})
	}
	return out
}

// ShortName names a transcript by its session id's first eight characters,
// prefixed with its session's when it is a subagent's, and by its
// directory and file name when the file is not named by its session.
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
	// A file not named by its session ("transcript.jsonl") is named by
	// its directory too.
	return filepath.Base(dir) + "/" + base
}
