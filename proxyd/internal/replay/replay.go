// Package replay is `synaxi-proxyd replay`: it rebuilds the requests a real
// Claude Code transcript implies, runs each through the real projection
// engine as if the conversation were a worker's, and compares the baseline
// (the growing transcript as Claude Code sends it, with its own cache
// breakpoints) with the projection under a simulated prompt cache.
//
// The --json output is a stable schema (Report, schema version 1; fields
// are only ever added):
//
//	{"schema":1, "transcript":PATH, "requests":N,
//	 "budget_tokens":B, "threshold_tokens":T, "client_source":"…",
//	 "baseline":  {"raw_tokens", "cache_write_tokens", "cache_read_tokens",
//	               "uncached_input_tokens", "billed_equivalent",
//	               "cache_hit_ratio", "invalid_requests", "blind_edits",
//	               "rereads", "billed_equivalent_with_rereads"},
//	 "projected": {same fields, plus "prefix_violations", "reprojections"},
//	 "raw_reduction": baseline/projected raw tokens,
//	 "billed_reduction": baseline/projected billed-equivalent input,
//	 "billed_reduction_with_rereads": the same with the reads blind edits
//	                     imply (below),
//	 "engaged_requests": requests the engine projected (the rest are
//	                     served as sent),
//	 "new_content_tokens", "hit_ceiling", "hit_ceiling_at_target_raw":
//	                     the hit-ratio ceiling (below),
//	 "repaired_results", "dropped_results", "skipped_lines": what the
//	                     request builder repaired (below),
//	 "worst_stop_billed_reduction", "worst_stop_request",
//	 "costlier_stops":   had the session stopped earlier (below),
//	 "rows": [one report of this shape per transcript],
//	 "median", "worst": {"raw_reduction", "billed_reduction",
//	                     "billed_reduction_with_rereads", "cache_hit_ratio", "invalid_requests",
//	                     "prefix_violations", "hit_ceiling",
//	                     "hit_ceiling_at_target_raw"} (several transcripts only)}
//
// Given several transcripts (or a directory: its *.jsonl files and those
// of every subagents/ directory below it), the top-level fields are the
// sums over all of them, and the table has one row per transcript plus
// the median and the worst value of each column.
//
// Tokens are estimated with internal/tokens; billed-equivalent input weighs
// uncached input 1×, 5-minute cache writes 1.25×, 1-hour writes 2× and
// cache reads 0.1×.
//
// # Rebuilt requests
//
// Every distinct assistant message is one request whose history is
// everything before it, in file order. Every request ends with a user
// message and answers each tool call, first thing in the next message,
// exactly once, whatever the transcript lost: a call whose result has no
// record (a line that did not parse, or none written) is answered by a
// tool_result with is_error set saying the result was not recorded in
// the transcript — both sides send it, so the comparison stays fair — and
// a result that answers no call of the message before it (its call's
// record is lost) is left out. When a new response follows unanswered
// calls directly, the client must have sent their results: that request
// is rebuilt, ending with the error results. A call the transcript ends
// on is in no request (none was sent after it). The report counts these
// (repaired_results, dropped_results) and the lines that did not parse
// (skipped_lines, transcript.Stats.Skipped).
//
// # Hit-ratio ceiling
//
// The hit ratio is reads ÷ (reads + writes + uncached). Each token of new
// content the client sends has to reach the model verbatim at least once
// (docs/projection.md: the current turn is served in full), and the first time it is
// sent nothing can read it from the cache: it is written or uncached. So
// in any layout that sends the client's messages, writes + uncached ≥ N,
// the new content (new_content_tokens): the whole first request, each
// request's growth over the one before it (the baseline only appends),
// and, after a compaction, the new history's first request less the tool
// list and system prompt it shares with the request before it (a cache
// may still hold them). Hence the projected hit ratio is at most
// hit_ceiling = 1 − N ÷ projected raw tokens, and, at a raw context
// exactly TargetRawReduction (3.5, issue 8's target) times below the
// baseline's, at most hit_ceiling_at_target_raw = 1 − 3.5·N ÷ baseline
// raw tokens (0 when the new content alone is more than that: no layout
// reaches 3.5×). Where it is approximate:
//
//   - N counts the client's tools and system prompt once. A layout with a
//     different prefix has its own: the projection's system prompt is
//     about 100 tokens longer than the recorded client's (its loop
//     contract), so its own N is larger and the ceiling, for it, slightly
//     loose (by under 0.0001 on the panel); a layout with a shorter
//     prefix could exceed the ceiling by its saving ÷ raw tokens.
//   - Tokens are the simulator's estimates of each block's canonical
//     JSON: the same content in another block (a tool result re-emitted
//     in the world snapshot) may be estimated a little differently.
//
// It is a bound, not a forecast: the projection also writes what it
// re-serves in a new layout (engagement, re-projections), so it stays
// below it.
//
// # Had the session stopped earlier
//
// The engine's output for request i depends on messages 0..i only, so
// the first i requests of a replay are exactly the replay of the session
// had it ended there. worst_stop_billed_reduction is the lowest
// billed-equivalent reduction over those stopping points (baseline ÷
// projected, summed over requests 1..i), worst_stop_request the i it
// occurs at, and costlier_stops how many of the stopping points cost more
// with the projection than without: what "never cost more" risks in a
// session that ends soon after the engine engages (engaging writes the
// projection whole, and only the following turns' reads pay it back).
//
// # Edits of text the request did not show
//
// The replay bills the transcript's own calls: it cannot know which calls
// an agent that saw less would have added. blind_edits counts, on each
// side, the Edit and MultiEdit calls the transcript's agent made whose old
// text the request they answer did not show: a line of an old_string
// (trimmed, 8 characters or more) that appears in none of the request's
// message strings. An agent served that request would have had to read
// the file again before editing it, a cost the billed figures leave out;
// the projected count above the baseline's is what the projection took
// from the agent.
//
// billed_reduction_with_rereads prices those reads, on both sides, as
// such an agent would make them (rereads): before the first blind edit of
// a file in a stretch between two of the side's rebuilds (re-projections,
// or compactions), one more turn, which reads from the cache the request
// it follows, and the file as the history last showed it whole (its
// latest Read result or Write; 0 tokens when there is none), written at
// the request's TTL and read by every later request of the stretch. The
// edits after it in the stretch see the file and add nothing. What the
// re-read changes in the side's later rebuilds, and the turn's own
// output, are left out. rereads counts the files so read.
package replay

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tidwall/gjson"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/tokens"
	"github.com/synaxi/synaxi/internal/transcript"
	"github.com/synaxi/synaxi/proxyd/internal/projection"
	"github.com/synaxi/synaxi/proxyd/internal/projection/cachesim"
	"github.com/synaxi/synaxi/proxyd/internal/projection/validate"
)

// Schema is the version of the --json report.
const Schema = 1

// Side is one column of the comparison.
type Side struct {
	RawTokens        int64   `json:"raw_tokens"`
	CacheWrite       int64   `json:"cache_write_tokens"`
	CacheRead        int64   `json:"cache_read_tokens"`
	Uncached         int64   `json:"uncached_input_tokens"`
	BilledEquivalent float64 `json:"billed_equivalent"`
	CacheHitRatio    float64 `json:"cache_hit_ratio"`
	InvalidRequests  int     `json:"invalid_requests"`
	// BlindEdits counts the edits whose old text the request they
	// answer did not show (see the package doc).
	BlindEdits int `json:"blind_edits"`
	// Rereads is how many files those edits would have had the agent
	// read again, and BilledWithRereads the billed-equivalent input with
	// those reads (see rereads).
	Rereads           int     `json:"rereads"`
	BilledWithRereads float64 `json:"billed_equivalent_with_rereads"`
	PrefixViolations  *int    `json:"prefix_violations,omitempty"`
	Reprojections     *int    `json:"reprojections,omitempty"`
	FirstInvalid      string  `json:"first_invalid,omitempty"`
}

// Report is the replay's result.
type Report struct {
	Schema          int     `json:"schema"`
	Transcript      string  `json:"transcript"`
	Requests        int     `json:"requests"`
	BudgetTokens    int     `json:"budget_tokens"`
	ThresholdTokens int     `json:"threshold_tokens"`
	ClientSource    string  `json:"client_source"`
	Baseline        Side    `json:"baseline"`
	Projected       Side    `json:"projected"`
	RawReduction    float64 `json:"raw_reduction"`
	BilledReduction float64 `json:"billed_reduction"`
	// BilledReductionWithRereads is the billed reduction with the reads
	// the blind edits imply on each side (see rereads).
	BilledReductionWithRereads float64 `json:"billed_reduction_with_rereads"`
	// Engaged is how many requests the engine projected; the others were
	// served as the client sent them.
	Engaged int `json:"engaged_requests"`
	// NewContentTokens is N, the tokens of new content the client sent
	// (see newContent); HitCeiling bounds the projected cache-hit ratio
	// at this run's raw context, HitCeilingAtTargetRaw at a raw context
	// TargetRawReduction times below the baseline's (see hitCeiling).
	NewContentTokens      int64   `json:"new_content_tokens"`
	HitCeiling            float64 `json:"hit_ceiling"`
	HitCeilingAtTargetRaw float64 `json:"hit_ceiling_at_target_raw"`
	// RepairedResults counts tool calls whose result the transcript
	// lacks, answered in the rebuilt requests by an error result;
	// DroppedResults counts tool results left out because they answer no
	// call of the message before them; SkippedLines counts the
	// transcript's lines that did not parse (transcript.Stats.Skipped).
	RepairedResults int `json:"repaired_results"`
	DroppedResults  int `json:"dropped_results"`
	SkippedLines    int `json:"skipped_lines"`
	// WorstStop is the lowest billed-equivalent reduction had the
	// session stopped after some request (WorstStopRequest, counted from
	// 1), and CostlierStops how many such stopping points cost more with
	// the projection (see the package doc). Of several transcripts: the
	// lowest, and the sum.
	WorstStop        float64 `json:"worst_stop_billed_reduction"`
	WorstStopRequest int     `json:"worst_stop_request"`
	CostlierStops    int     `json:"costlier_stops"`
	// Rows holds one report per transcript; a replay of one transcript
	// has one row, equal to the report itself. Of several, the report's
	// own fields are their sums (reductions and ratios of the sums), with
	// the median and worst row values per column.
	Rows   []*Report `json:"rows,omitempty"`
	Median *Summary  `json:"median,omitempty"`
	Worst  *Summary  `json:"worst,omitempty"`

	bu, pu cachesim.Usage
	// bre and pre are what the sides' blind edits would have added
	// (see rereads).
	bre, pre cachesim.Usage
}

// Options configures a replay.
type Options struct {
	Projection projection.Config
	// Tools, when set, replaces the recorded client's tool schemas on both
	// sides (a main session's, to measure the tool roster).
	Tools []json.RawMessage
	// Dump, when set, receives one JSON line per simulated request (see
	// DumpLine), for cross-checking the cache simulation.
	Dump io.Writer
}

// DumpLine is one simulated request of --dump.
type DumpLine struct {
	Side      string          `json:"side"` // "baseline" or "projected"
	At        time.Time       `json:"at"`
	MinTokens int             `json:"min_tokens"`
	Body      json.RawMessage `json:"body"`
	Usage     cachesim.Usage  `json:"usage"`
}

// Body is one replayed request pair, for tests.
type Body struct {
	Baseline, Projected []byte
	Reprojected, Reset  bool
	// Engaged is false when the engine served the baseline as sent.
	Engaged bool
}

// Run replays the transcript at path.
func Run(ctx context.Context, path string, opts Options, each func(Body)) (*Report, error) {
	tr, err := transcript.Open(path)
	if err != nil {
		return nil, err
	}
	defer tr.Close()
	b, err := requests(tr)
	if err != nil {
		return nil, err
	}
	reqs := b.reqs
	c, err := loadClient()
	if err == nil && opts.Tools != nil {
		c.Tools = opts.Tools
	}
	if err != nil {
		return nil, err
	}
	eng := projection.New(opts.Projection)
	tok := func(b []byte) int { return tokens.EstimateBytes(b) }
	rep := &Report{Schema: Schema, Transcript: path, Requests: len(reqs),
		ClientSource:    gjson.GetBytes(clientJSON, "source").String(),
		RepairedResults: b.repaired, DroppedResults: b.dropped, SkippedLines: tr.Stats().Skipped()}
	fresh := newContent{keep: c.prefixTokens(tok)}
	var base, proj *cachesim.Sim
	var bu, pu cachesim.Usage
	violations, reprojections := 0, 0
	stops := stopTracker{}
	var prev, prevBase []byte
	var baseRe, projRe rereads
	var prevTotal, prevBaseTotal int64
	for i, r := range reqs {
		var blindBase, blindProj []editCall
		if i > 0 && !r.reset && len(r.messages) > len(reqs[i-1].messages) {
			// The assistant message that answered the previous request.
			if calls := editCalls(r.messages[len(reqs[i-1].messages)]); len(calls) > 0 {
				blindBase, blindProj = unseen(calls, prevBase), unseen(calls, prev)
				rep.Baseline.BlindEdits += len(blindBase)
				rep.Projected.BlindEdits += len(blindProj)
			}
		}
		baseRe.ttl1h, projRe.ttl1h = r.ttl == "1h", r.ttl == "1h"
		if base == nil {
			min := cachesim.MinTokensFor(r.model)
			base, proj = cachesim.New(min, tok), cachesim.New(min, tok)
		}
		bb := c.baselineBody(r)
		if err := validate.Request(bb); err != nil {
			rep.Baseline.InvalidRequests++
			if rep.Baseline.FirstInvalid == "" {
				rep.Baseline.FirstInvalid = err.Error()
			}
		}
		u, err := base.Request(bb, r.at)
		if err != nil {
			return nil, err
		}
		bu.Add(u)
		fresh.add(u.Total(), r.reset)
		if err := dump(opts.Dump, "baseline", r.at, base.MinTokens, bb, u); err != nil {
			return nil, err
		}
		res, err := eng.ProjectBody(ctx, bb, "")
		if err != nil {
			return nil, fmt.Errorf("project request %d: %w", i, err)
		}
		rep.BudgetTokens, rep.ThresholdTokens = res.Budget, res.Threshold
		if err := validate.Request(res.Body); err != nil {
			rep.Projected.InvalidRequests++
			if rep.Projected.FirstInvalid == "" {
				rep.Projected.FirstInvalid = err.Error()
			}
		}
		pu2, err := proj.Request(res.Body, r.at)
		if err != nil {
			return nil, err
		}
		pu.Add(pu2)
		stops.add(bu, pu)
		if err := dump(opts.Dump, "projected", r.at, proj.MinTokens, res.Body, pu2); err != nil {
			return nil, err
		}
		if res.Reprojected {
			reprojections++
		}
		if res.Engaged {
			rep.Engaged++
		}
		// The reads an agent shown less would have added (see rereads).
		baseRe.request(r.reset)
		projRe.request(r.reset || res.Reprojected)
		for _, c := range blindBase {
			baseRe.edit(c.path, fileTokens(reqs[i-1].messages, c.path, tok), prevBaseTotal)
		}
		for _, c := range blindProj {
			projRe.edit(c.path, fileTokens(reqs[i-1].messages, c.path, tok), prevTotal)
		}
		prevBaseTotal, prevTotal = u.Total(), pu2.Total()
		if prev != nil && !r.reset && !res.Reprojected {
			if i := validate.PrefixBreak(prev, res.Body); i >= 0 {
				violations++
			}
		}
		prev, prevBase = res.Body, bb
		if each != nil {
			each(Body{Baseline: bb, Projected: res.Body, Reprojected: res.Reprojected, Reset: r.reset, Engaged: res.Engaged})
		}
	}
	rep.Projected.PrefixViolations = &violations
	rep.Projected.Reprojections = &reprojections
	rep.bu, rep.pu = bu, pu
	rep.bre, rep.pre = baseRe.u, projRe.u
	rep.Baseline.Rereads, rep.Projected.Rereads = baseRe.calls, projRe.calls
	rep.NewContentTokens = fresh.n
	rep.WorstStop, rep.WorstStopRequest, rep.CostlierStops = stops.worst, stops.at, stops.costlier
	rep.totals()
	return rep, nil
}

// editCalls returns the Edit and MultiEdit calls of assistant message m
// (a MultiEdit's edits together, as one call).
func editCalls(m msg) []editCall {
	if m.Role != "assistant" {
		return nil
	}
	var out []editCall
	for _, c := range m.Content {
		b := gjson.ParseBytes(c)
		if b.Get("type").String() != "tool_use" {
			continue
		}
		in := b.Get("input")
		call := editCall{path: in.Get("file_path").String()}
		switch b.Get("name").String() {
		case "Edit":
			call.olds = []string{in.Get("old_string").String()}
		case "MultiEdit":
			in.Get("edits").ForEach(func(_, e gjson.Result) bool {
				call.olds = append(call.olds, e.Get("old_string").String())
				return true
			})
		default:
			continue
		}
		out = append(out, call)
	}
	return out
}

// minShownLine is the shortest trimmed line of an old_string that
// unseen looks for (shorter ones, "}" or "end", are everywhere).
const minShownLine = 8

// unseen returns the calls with a line of old text the request body did
// not show: in none of its messages' strings.
func unseen(calls []editCall, body []byte) []editCall {
	if body == nil {
		return nil
	}
	shown := shownText(body)
	var out []editCall
	for _, call := range calls {
	lines:
		for _, old := range call.olds {
			for _, line := range strings.Split(old, "\n") {
				if t := strings.TrimSpace(line); len(t) >= minShownLine && !strings.Contains(shown, t) {
					out = append(out, call)
					break lines
				}
			}
		}
	}
	return out
}

// shownText is every string of a request's messages, one per line.
func shownText(body []byte) string {
	var sb strings.Builder
	var walk func(v gjson.Result)
	walk = func(v gjson.Result) {
		switch {
		case v.Type == gjson.String:
			sb.WriteString(v.Str)
			sb.WriteByte('\n')
		case v.IsArray() || v.IsObject():
			v.ForEach(func(_, c gjson.Result) bool { walk(c); return true })
		}
	}
	walk(gjson.GetBytes(body, "messages"))
	return sb.String()
}

// stopTracker follows the billed reduction of every stopping point: the
// usage summed over the requests so far, on both sides.
type stopTracker struct {
	n, at, costlier int
	worst           float64
}

// add takes the sums after one more request.
func (t *stopTracker) add(base, proj cachesim.Usage) {
	t.n++
	b, p := base.BilledEquivalent(), proj.BilledEquivalent()
	if p <= 0 {
		return
	}
	r := b / p
	if t.at == 0 || r < t.worst {
		t.worst, t.at = r, t.n
	}
	// Costlier by more than rounding: the sums are of float products.
	if p > b*(1+1e-9) {
		t.costlier++
	}
}

// totals fills the sides and reductions from the summed usage.
func (r *Report) totals() {
	r.Baseline.fill(r.bu)
	r.Projected.fill(r.pu)
	r.Baseline.BilledWithRereads = r.Baseline.BilledEquivalent + r.bre.BilledEquivalent()
	r.Projected.BilledWithRereads = r.Projected.BilledEquivalent + r.pre.BilledEquivalent()
	r.RawReduction, r.BilledReduction, r.BilledReductionWithRereads = 0, 0, 0
	if r.Projected.BilledWithRereads > 0 {
		r.BilledReductionWithRereads = r.Baseline.BilledWithRereads / r.Projected.BilledWithRereads
	}
	if r.pu.Total() > 0 {
		r.RawReduction = float64(r.bu.Total()) / float64(r.pu.Total())
	}
	if r.pu.BilledEquivalent() > 0 {
		r.BilledReduction = r.bu.BilledEquivalent() / r.pu.BilledEquivalent()
	}
	r.HitCeiling = hitCeiling(r.NewContentTokens, float64(r.pu.Total()))
	r.HitCeilingAtTargetRaw = hitCeiling(r.NewContentTokens, float64(r.bu.Total())/TargetRawReduction)
}

func dump(w io.Writer, side string, at time.Time, min int, body []byte, u cachesim.Usage) error {
	if w == nil {
		return nil
	}
	line, err := json.Marshal(DumpLine{Side: side, At: at, MinTokens: min, Body: body, Usage: u})
	if err != nil {
		return fmt.Errorf("dump: %w", err)
	}
	_, err = w.Write(append(line, '\n'))
	return err
}

func (s *Side) fill(u cachesim.Usage) {
	s.RawTokens = u.Total()
	s.CacheWrite = u.Write5m + u.Write1h
	s.CacheRead = u.Read
	s.Uncached = u.Input
	s.BilledEquivalent = u.BilledEquivalent()
	if t := u.Total(); t > 0 {
		s.CacheHitRatio = float64(u.Read) / float64(t)
	}
}

// Main is `synaxi-proxyd replay PATH… [--json] [--budget N] [--threshold N]
// [--trim-tools] [--stub-tools] [--tools-from BODY.json] [--dump FILE]`: each PATH is a transcript or a directory of
// them (see Transcripts).
func Main(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the report as JSON (stable schema, see the package doc)")
	markdown := fs.Bool("markdown", false, "print the per-transcript table as Markdown")
	budget := fs.Int("budget", 0, "world budget in tokens (0: sized to the model, as projection.budget_tokens)")
	threshold := fs.Int("threshold", 0, "re-projection step in tokens (0: derived from the budget)")
	trim := fs.Bool("trim-tools", false, "trim tool schemas as projection.trim_tools does")
	stub := fs.Bool("stub-tools", config.Default().Projection.StubTools, "serve tools never called as stubs, as projection.stub_tools does (--stub-tools=false: as sent)")
	toolsFrom := fs.String("tools-from", "", "a captured request body whose tools both sides send instead of the worker's")
	dumpPath := fs.String("dump", "", "write every simulated request (side, time, body, usage) as JSON lines to this file")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: synaxi-proxyd replay TRANSCRIPT.jsonl|DIR… [--json|--markdown] [--budget N] [--threshold N] [--trim-tools] [--stub-tools] [--tools-from BODY.json] [--dump FILE]")
		fmt.Fprintln(stderr, "A directory stands for its *.jsonl files and those in every subagents/ directory below it.")
		fs.PrintDefaults()
	}
	// Flags may follow the transcript paths.
	var args1 []string
	rest := args
	for len(rest) > 0 {
		if err := fs.Parse(rest); err != nil {
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		args1 = append(args1, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if len(args1) == 0 {
		fs.Usage()
		return 2
	}
	paths, err := Transcripts(args1)
	if err != nil {
		fmt.Fprintf(stderr, "synaxi-proxyd replay: %v\n", err)
		return 1
	}
	opts := Options{Projection: projection.Config{BudgetTokens: *budget, ThresholdTokens: *threshold, TrimTools: *trim, StubTools: *stub}}
	if *toolsFrom != "" {
		b, err := os.ReadFile(*toolsFrom)
		if err == nil && !gjson.GetBytes(b, "tools").IsArray() {
			err = fmt.Errorf("%s has no \"tools\" array: give a captured Messages request body", *toolsFrom)
		}
		if err != nil {
			fmt.Fprintf(stderr, "synaxi-proxyd replay: --tools-from: %v\n", err)
			return 2
		}
		for _, t := range gjson.GetBytes(b, "tools").Array() {
			opts.Tools = append(opts.Tools, json.RawMessage(t.Raw))
		}
	}
	if *dumpPath != "" {
		f, err := os.Create(*dumpPath)
		if err != nil {
			fmt.Fprintf(stderr, "synaxi-proxyd replay: %v\n", err)
			return 1
		}
		defer f.Close()
		bw := bufio.NewWriter(f)
		defer bw.Flush()
		opts.Dump = bw
	}
	var rep *Report
	if len(paths) == 1 {
		rep, err = Run(context.Background(), paths[0], opts, nil)
		if err == nil {
			row := *rep
			rep.Rows = []*Report{&row}
		}
	} else {
		rep, err = RunPanel(context.Background(), paths, opts)
	}
	if err != nil {
		fmt.Fprintf(stderr, "synaxi-proxyd replay: %v\n", err)
		return 1
	}
	switch {
	case *asJSON:
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(stderr, "synaxi-proxyd replay: %v\n", err)
			return 1
		}
	case *markdown:
		rep.Markdown(stdout)
	case len(paths) == 1:
		rep.Table(stdout)
	default:
		rep.PanelTable(stdout)
	}
	return 0
}

// Table prints the report as a plain table.
func (r *Report) Table(w io.Writer) {
	fmt.Fprintf(w, "transcript: %s\nrequests: %d  budget: %d tokens  threshold: %d tokens\n\n", r.Transcript, r.Requests, r.BudgetTokens, r.ThresholdTokens)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tbaseline\tprojected\t")
	row := func(name string, b, p any) { fmt.Fprintf(tw, "%s\t%v\t%v\t\n", name, b, p) }
	row("raw context tokens", r.Baseline.RawTokens, r.Projected.RawTokens)
	row("cache write", r.Baseline.CacheWrite, r.Projected.CacheWrite)
	row("cache read", r.Baseline.CacheRead, r.Projected.CacheRead)
	row("uncached input", r.Baseline.Uncached, r.Projected.Uncached)
	row("billed-equivalent input", fmt.Sprintf("%.0f", r.Baseline.BilledEquivalent), fmt.Sprintf("%.0f", r.Projected.BilledEquivalent))
	row("cache-hit ratio", fmt.Sprintf("%.3f", r.Baseline.CacheHitRatio), fmt.Sprintf("%.3f", r.Projected.CacheHitRatio))
	row("invalid requests", r.Baseline.InvalidRequests, r.Projected.InvalidRequests)
	row("prefix violations", "-", deref(r.Projected.PrefixViolations))
	row("re-projections", "-", deref(r.Projected.Reprojections))
	tw.Flush()
	fmt.Fprintf(w, "\nraw context %.2f× below baseline; billed-equivalent input %.2f× below baseline\n", r.RawReduction, r.BilledReduction)
	fmt.Fprintf(w, "new content %d tokens: projected hit ratio at most %.3f at this raw context, %.3f at %.1f× below baseline\n",
		r.NewContentTokens, r.HitCeiling, r.HitCeilingAtTargetRaw, TargetRawReduction)
	fmt.Fprintf(w, "had it stopped earlier: billed %.2f× below baseline at worst (after request %d); %d of %d stopping points cost more\n",
		r.WorstStop, r.WorstStopRequest, r.CostlierStops, r.Requests)
	fmt.Fprintf(w, "edits whose old text the request did not show (a re-read the billed figures leave out): %d projected, %d baseline\n",
		r.Projected.BlindEdits, r.Baseline.BlindEdits)
	fmt.Fprintf(w, "with those files read again (%d projected, %d baseline): billed-equivalent input %.2f× below baseline\n",
		r.Projected.Rereads, r.Baseline.Rereads, r.BilledReductionWithRereads)
	if s := r.repairs(); s != "" {
		fmt.Fprintf(w, "rebuilt requests: %s\n", s)
	}
}

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}
