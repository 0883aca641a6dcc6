// Package replay is `synaxi-proxyd replay`: it rebuilds the requests a real
// Claude Code transcript implies, sends each through the proxy's gate with
// the proxy's scope (main sessions and subagents alike carry no worker
// sentinel, so `all` projects them and `worker` leaves them as sent) and,
// where the gate hands it over, the real projection engine, and compares
// the baseline (the growing transcript as Claude Code sends it, with its
// own cache breakpoints) with what the proxy serves under a simulated
// prompt cache. It also referees what the projection took from the agent
// and the user, and bounds what any projection could reach.
//
// The --json output is a stable schema (Report, schema version 1; fields
// are only ever added):
//
//	{"schema":1, "transcript":PATH, "requests":N, "scope":"all|worker|off",
//	 "budget_tokens":B, "threshold_tokens":T, "client_source":"…",
//	 "baseline":  {"raw_tokens", "cache_write_tokens", "cache_read_tokens",
//	               "uncached_input_tokens", "billed_equivalent",
//	               "cache_hit_ratio", "invalid_requests", "blind_edits",
//	               "rereads", "billed_equivalent_with_rereads",
//	               "hidden_then_needed": {"edits", "reads", "commands",
//	                  "symbols", "quotes", "recovery_tokens"},
//	               "recoveries", "billed_equivalent_with_recovery",
//	               "user_typed_hidden", "first_user_typed_hidden"},
//	 "projected": {same fields, plus "prefix_violations", "reprojections",
//	               "roster_changes" (a tool list restored: not a violation)},
//	 "raw_reduction": baseline/projected raw tokens,
//	 "billed_reduction": baseline/projected billed-equivalent input,
//	 "billed_reduction_with_rereads": the same with a re-read before
//	                     every blind edit (below),
//	 "billed_reduction_with_recovery": with every recovery the referee
//	                     prices (below),
//	 "bound_billed_equivalent", "bound_reduction", "bound_share",
//	 "bound_share_with_rereads": the session's bound (below),
//	 "never_costlier":   the projection, recoveries priced, bills no more
//	                     than the baseline,
//	 "too_little_history": the engine engaged on no request (nothing
//	                     measured but that the sessions are too short),
//	 "engaged_requests": requests the engine projected (the rest are
//	                     served as sent),
//	 "new_content_tokens", "hit_ceiling", "hit_ceiling_at_target_raw":
//	                     the hit-ratio ceiling (below),
//	 "repaired_results", "dropped_results", "skipped_lines",
//	 "edit_calls":       the Edit and MultiEdit calls looked at,
//	 "sidechain_records", "orphan_answers": what the request builder
//	                     repaired (below),
//	 "worst_stop_billed_reduction", "worst_stop_request",
//	 "costlier_stops":   had the session stopped earlier (below),
//	 "rows": [one report of this shape per transcript],
//	 "median", "worst": {"raw_reduction", "billed_reduction",
//	                     "billed_reduction_with_rereads",
//	                     "billed_reduction_with_recovery", "bound_reduction",
//	                     "bound_share", "bound_share_with_rereads",
//	                     "cache_hit_ratio", "invalid_requests",
//	                     "prefix_violations", "user_typed_hidden",
//	                     "hit_ceiling", "hit_ceiling_at_target_raw",
//	                     "worst_stop_billed_reduction"} (several transcripts only),
//	 "long_median", "long_worst": the same over the rows of 50 requests or
//	                     more (LongSession), when some rows are shorter}
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
// on is in no request (none was sent after it). Claude Code 1.x logged a
// Task subagent's turns inline (isSidechain) in the main session's file:
// they are left out of its requests (sidechain_records); a subagent's own
// file is all sidechain and is replayed whole. A continued session's file
// can begin with answers whose user turn is in an earlier file: a
// placeholder user message stands for it on both sides (orphan_answers).
// Claude Code 1.x marks a compaction by its summary record alone, which
// starts a new history as a boundary does. The report counts these
// (repaired_results, dropped_results, sidechain_records, orphan_answers)
// and the lines that did not parse (skipped_lines, transcript.Stats.Skipped).
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
// # What the user loses
//
// The replay bills the transcript's own calls: it cannot know which calls
// an agent that saw less would have added. The referee finds, on each
// side, where a request's answer (or the user turn it ends with) used
// content that the request did not show (hidden_then_needed):
//
//   - edits (blind_edits): an Edit or MultiEdit whose old text has a line
//     (trimmed, 8 characters or more) in none of the request's message
//     strings; an agent served that request would have had to read the
//     file again first;
//   - reads: a Read of a file whose latest whole view in the history (a
//     Read result or a Write) the request no longer showed;
//   - commands: a Bash command, 8 characters or more, that the history
//     showed and the request did not (run before, its call folded);
//   - symbols: a code identifier (snake_case, camelCase, 8 characters or
//     more) in a call's input, old text and paths aside, that the history
//     showed and the request did not, and the client's tool schemas and
//     system prompt do not (TodoWrite's plan aside); each once per answer;
//   - quotes: a line (20 characters or more) of the user's new message
//     that repeats a line of the history before it which the request no
//     longer showed before it; each once per message.
//
// On the baseline the history is the request, so only edits can count
// there (the matcher's own noise: old text that was never shown, or shown
// differently); the projected count above the baseline's is what the
// projection took.
//
// Recovering costs a call at that moment (recovery): one more turn, which
// reads the request it follows from the cache, and what it reads again —
// the file as the history last showed it whole before a blind edit (else
// the tool result that showed the old text), the latest tool result that
// showed a symbol or a quoted line — written at the request's TTL and read
// by every later request until the side's next rebuild. A blind edit's
// re-read is priced every time, even of a file re-read before in the same
// stretch: the replay serves the side's requests as they were, so the next
// edit finds the file hidden again, and an edit needs its current text. A
// symbol's or quote's source is priced once per stretch. A Read or a
// command run again is its own recovery, already billed on both sides, and
// adds nothing. billed_reduction_with_rereads prices the blind edits'
// re-reads alone (rereads counts them), billed_reduction_with_recovery
// every recovery (recoveries counts them, recovery_tokens what they read
// again). What a recovery changes in later rebuilds, and its turn's
// output, are left out.
//
// user_typed_hidden counts the user-typed blocks — text the user typed, a
// slash-command or skill expansion, an image or a document: a user
// message's blocks other than tool results, system reminders and
// compaction summaries — that some later request of the side did not show
// (each block once). It must be 0 (SPEC: what the user typed is served in
// every later request exactly as sent).
//
// # The session's bound
//
// bound_billed_equivalent is the least billed-equivalent input any
// projection of the session could bill, computed from the session alone:
// its fixed part — the tools and system prompt, each history's first
// message and the environment message after it, every user-typed block
// and compaction summary — written once and read (0.1×) by every later
// request, and every other token of new content (new_content_tokens)
// written once at five minutes (1.25×) and never read again. A pause
// longer than the TTL expires the cache, and the fixed part is written
// again; a compaction keeps the tools and system prompt cached. The fixed
// part is priced at both TTLs (five minutes, 1.25×; an hour, 2×) and the
// cheaper is taken, whatever the client asked: a projection may choose
// either.
// bound_reduction is the baseline's billed input over it, and bound_share
// = bound ÷ the projection's billed input with every recovery priced: the
// share of the best reduction the projection reaches (1 is the bound);
// bound_share_with_rereads prices the blind edits' re-reads alone. A
// projection that drops part of the fixed part (the synaxi-worker's
// system prompt) can exceed 1.
package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/synaxi/synaxi/internal/tokens"
	"github.com/synaxi/synaxi/internal/transcript"
	"github.com/synaxi/synaxi/proxyd/internal/gate"
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
	// HiddenThenNeeded counts what the side's requests did not show and
	// their answers (or the user) used; Recoveries how many re-reads or
	// re-runs that costs, and BilledWithRecovery the billed-equivalent
	// input with them (see the package doc, "What the user loses").
	HiddenThenNeeded   Needed  `json:"hidden_then_needed"`
	Recoveries         int     `json:"recoveries"`
	BilledWithRecovery float64 `json:"billed_equivalent_with_recovery"`
	// RosterChanges counts the projected requests whose tool list alone
	// differs from the request before (a stubbed tool restored after its
	// first call, projection.stub_tools): a deliberate cache break, billed
	// as such, not a prefix violation.
	RosterChanges int `json:"roster_changes,omitempty"`
	// UserTypedHidden counts the user-typed blocks (messages, images,
	// command and skill expansions) a later request of the side did not
	// show; FirstUserTypedHidden begins the first of them.
	UserTypedHidden      int    `json:"user_typed_hidden"`
	FirstUserTypedHidden string `json:"first_user_typed_hidden,omitempty"`
	PrefixViolations     *int   `json:"prefix_violations,omitempty"`
	Reprojections        *int   `json:"reprojections,omitempty"`
	FirstInvalid         string `json:"first_invalid,omitempty"`
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
	// BilledReductionWithRereads is the billed reduction with a re-read
	// before every blind edit on each side (see recovery), and
	// BilledReductionWithRecovery with every recovery the referee prices.
	BilledReductionWithRereads  float64 `json:"billed_reduction_with_rereads"`
	BilledReductionWithRecovery float64 `json:"billed_reduction_with_recovery"`
	// BoundBilled is the best billed-equivalent input any projection of
	// the session could reach (see bound), BoundReduction the baseline's
	// over it, and BoundShare how much of it the projection reaches:
	// BilledReductionWithRecovery ÷ BoundReduction; BoundShareWithRereads
	// the same with the blind edits' re-reads alone priced (issue 27's
	// measure), BilledReductionWithRereads ÷ BoundReduction.
	BoundBilled           float64 `json:"bound_billed_equivalent"`
	BoundReduction        float64 `json:"bound_reduction"`
	BoundShare            float64 `json:"bound_share"`
	BoundShareWithRereads float64 `json:"bound_share_with_rereads"`
	// NeverCostlier is true when the projection with every recovery
	// priced bills no more than the baseline.
	NeverCostlier bool `json:"never_costlier"`
	// Scope is the gate's scope the requests were projected under
	// (ScopeRule), as the proxy's projection.scope.
	Scope string `json:"scope"`
	// TooLittleHistory is true when the engine engaged on no request:
	// nothing here is a measured saving, only that these sessions are too
	// short for the projection to pay.
	TooLittleHistory bool `json:"too_little_history"`
	// EditCalls counts the Edit and MultiEdit calls the blind-edit count
	// looked at (every answer to a request but the last).
	EditCalls int `json:"edit_calls"`
	// SidechainRecords counts the inline subagent records (Claude Code
	// 1.x) left out of a main session's requests.
	SidechainRecords int `json:"sidechain_records"`
	// OrphanAnswers counts the answers with no user turn before them in
	// the file (a continued session's), sent after a placeholder user
	// message on both sides.
	OrphanAnswers int `json:"orphan_answers"`
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
	// LongMedian and LongWorst summarise the rows of LongSession
	// requests or more, when there are both such rows and others.
	LongMedian *Summary `json:"long_median,omitempty"`
	LongWorst  *Summary `json:"long_worst,omitempty"`

	bu, pu cachesim.Usage
	// bre and pre are what the sides' blind edits' re-reads add, brc and
	// prc every recovery (see recovery); bound the bound's billed input.
	bre, pre, brc, prc cachesim.Usage
	bound              float64
}

// Options configures a replay.
type Options struct {
	Projection projection.Config
	// Tools, when set, replaces the recorded client's tool schemas on both
	// sides (a main session's, to measure the tool roster).
	Tools []json.RawMessage
	// Scope is the gate's scope (ScopeRule); empty: the proxy's default.
	Scope string
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
	scope := opts.Scope
	if scope == "" {
		scope = DefaultScope()
	}
	rule, err := ScopeRule(scope)
	if err != nil {
		return nil, err
	}
	hdr := agentHeader(path)
	eng := projection.New(opts.Projection)
	tok := func(b []byte) int { return tokens.EstimateBytes(b) }
	rep := &Report{Schema: Schema, Transcript: path, Requests: len(reqs), Scope: scope,
		ClientSource:    gjson.GetBytes(clientJSON, "source").String(),
		RepairedResults: b.repaired, DroppedResults: b.dropped, SkippedLines: tr.Stats().Skipped(),
		SidechainRecords: b.sidechain, OrphanAnswers: b.orphans}
	keep := c.prefixTokens(tok)
	known := c.identifiers()
	env := int64(max(1, tok(cachesim.Canonical(c.Environment))))
	fresh := newContent{keep: keep}
	bnd := bound{keep: keep}
	var base, proj *cachesim.Sim
	var bu, pu cachesim.Usage
	violations, reprojections := 0, 0
	stops := stopTracker{}
	var prev []byte
	var prevBV, prevPV *view
	var baseL, projL loss
	var prevTotal, prevBaseTotal int64
	prevTail := "" // the time to live of the projected side's tail at the request before
	for i, r := range reqs {
		baseL.setTTL(r.ttl)
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
		bnd.add(keep+fixedTokens(r.messages, b.summaries, env, tok), fresh.add(u.Total(), r.reset), r.at, r.reset)
		if err := dump(opts.Dump, "baseline", r.at, base.MinTokens, bb, u); err != nil {
			return nil, err
		}
		res := &projection.Result{Body: bb}
		if rule.Decide(http.MethodPost, "/v1/messages", hdr, gate.Parse(bb)).Gated {
			if res, err = eng.ProjectBody(ctx, bb, ""); err != nil {
				return nil, fmt.Errorf("project request %d: %w", i, err)
			}
			rep.BudgetTokens, rep.ThresholdTokens = res.Budget, res.Threshold
		}
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
		bv, pv := newView(bb), (*view)(nil)
		if res.Engaged {
			rep.Engaged++
			pv = newView(res.Body)
			projL.userTypedHidden(r.messages, b.summaries, pv)
		} else {
			pv = bv
		}
		// What the answer to the previous request used that it did not
		// show, and what recovering it costs (see loss).
		baseL.request(r.reset)
		projL.request(r.reset || res.Reprojected)
		if i > 0 && !r.reset && len(r.messages) > len(reqs[i-1].messages) {
			resp := r.messages[len(reqs[i-1].messages)]
			rep.EditCalls += len(editCalls(resp))
			h := reqs[i-1].messages
			baseL.take(referee{h, prevBV, prevBV, tok, known}.answer(resp), prevBaseTotal)
			projL.setTTL(prevTail)
			projL.take(referee{h, prevBV, prevPV, tok, known}.answer(resp), prevTotal)
		}
		// A recovery is written where the side's tail is: at five minutes
		// on an engaged request whatever the client asks (the
		// projection's marks), else at the client's time to live.
		tail := r.ttl
		if res.Engaged {
			tail = ""
		}
		projL.setTTL(tail)
		if pv != bv && hasUserText(r.messages[len(r.messages)-1], b.summaries) {
			projL.take(referee{r.messages, bv, pv, tok, known}.quotes(b.summaries, lines(bv.prefix), lines(pv.prefix)), pu2.Total())
		}
		prevBaseTotal, prevTotal = u.Total(), pu2.Total()
		prevTail = tail
		if prev != nil && !r.reset && !res.Reprojected {
			if i := validate.PrefixBreak(prev, res.Body); i >= 0 {
				if rosterOnly(prev, res.Body) {
					rep.Projected.RosterChanges++
				} else {
					violations++
				}
			}
		}
		prev, prevBV, prevPV = res.Body, bv, pv
		if each != nil {
			each(Body{Baseline: bb, Projected: res.Body, Reprojected: res.Reprojected, Reset: r.reset, Engaged: res.Engaged})
		}
	}
	rep.Projected.PrefixViolations = &violations
	rep.Projected.Reprojections = &reprojections
	rep.bu, rep.pu = bu, pu
	rep.Baseline.takeLoss(&baseL)
	rep.Projected.takeLoss(&projL)
	rep.bre, rep.pre = baseL.edits.u, projL.edits.u
	rep.brc, rep.prc = baseL.all.u, projL.all.u
	rep.bound = bnd.billed()
	rep.NewContentTokens = fresh.n
	rep.WorstStop, rep.WorstStopRequest, rep.CostlierStops = stops.worst, stops.at, stops.costlier
	rep.totals()
	return rep, nil
}

// rosterOnly reports whether two served requests differ in their tool
// list alone among what PrefixBreak compares.
func rosterOnly(prev, next []byte) bool {
	p, err1 := sjson.DeleteBytes(prev, "tools")
	n, err2 := sjson.DeleteBytes(next, "tools")
	return err1 == nil && err2 == nil && validate.PrefixBreak(p, n) < 0
}

// takeLoss fills the side's referee figures.
func (s *Side) takeLoss(l *loss) {
	s.HiddenThenNeeded = l.needed
	s.HiddenThenNeeded.RecoveryTokens = l.all.u.Write5m + l.all.u.Write1h
	s.BlindEdits = l.needed.Edits
	s.Rereads, s.Recoveries = l.edits.calls, l.all.calls
	s.UserTypedHidden, s.FirstUserTypedHidden = len(l.userHidden), l.first
}

// hasUserText reports whether a message holds user-typed text.
func hasUserText(m msg, summaries map[string]bool) bool {
	for _, b := range m.Content {
		if userTyped(b, summaries) && gjson.GetBytes(b, "type").String() == "text" {
			return true
		}
	}
	return false
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

// unseenIn returns the calls with a line of old text the request's view
// did not show: in none of its messages' strings. With no request before
// (v nil) there is nothing to compare.
func unseenIn(calls []editCall, v *view) []editCall {
	if v == nil {
		return nil
	}
	var out []editCall
	for _, call := range calls {
		if firstUnseen(call, v) != "" {
			out = append(out, call)
		}
	}
	return out
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
	r.Baseline.BilledWithRecovery = r.Baseline.BilledEquivalent + r.brc.BilledEquivalent()
	r.Projected.BilledWithRecovery = r.Projected.BilledEquivalent + r.prc.BilledEquivalent()
	r.RawReduction, r.BilledReduction, r.BilledReductionWithRereads, r.BilledReductionWithRecovery = 0, 0, 0, 0
	r.BoundBilled, r.BoundReduction, r.BoundShare, r.BoundShareWithRereads = r.bound, 0, 0, 0
	if r.Projected.BilledWithRereads > 0 {
		r.BilledReductionWithRereads = r.Baseline.BilledWithRereads / r.Projected.BilledWithRereads
	}
	if r.Projected.BilledWithRecovery > 0 {
		r.BilledReductionWithRecovery = r.Baseline.BilledWithRecovery / r.Projected.BilledWithRecovery
	}
	if r.bound > 0 && r.Projected.BilledWithRecovery > 0 {
		r.BoundReduction = r.Baseline.BilledEquivalent / r.bound
		r.BoundShare = r.bound / r.Projected.BilledWithRecovery
		r.BoundShareWithRereads = r.bound / r.Projected.BilledWithRereads
	}
	r.NeverCostlier = r.Projected.BilledWithRecovery <= r.Baseline.BilledWithRecovery*(1+1e-9)
	r.TooLittleHistory = r.Engaged == 0
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
