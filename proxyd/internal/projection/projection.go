// Package projection is synaxi's projection engine: it turns the worker's
// ever-growing Claude Code transcript into a bounded, cache-stable request.
//
// The served messages are the goal (everything before the first assistant
// message, verbatim), a snapshot of the world — durable observations keyed
// by identity (file path, `cmd:<command>`, search keys) re-emitted as paired
// tool_use/tool_result exchanges with deterministic ids, followed by a note
// naming what was dropped and how to get it back — and the tail: every
// message since the last re-projection point, appended as the client sent
// it (once it is no longer the current turn, a result identical to one the
// request still shows becomes a reference to it, and large non-Read output
// is shortened). Operational memory rides in a <system-reminder> on the final
// message only.
//
// Re-projection happens only at deterministic points: when the served size,
// with the current turn in full, crosses budget + threshold. Between points
// request n+1 re-serves request n's messages byte-identical, except the
// previous current turn, which takes its curated form exactly once. All of
// it is a pure function of the request's messages and the configuration:
// the fold is recomputed from the messages on every request, so a restarted
// proxy serves identical bytes.
package projection

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/ledger"
	"github.com/synaxi/synaxi/internal/tokens"
	"github.com/synaxi/synaxi/internal/visibility"
	"github.com/synaxi/synaxi/proxyd/internal/gate"
)

// Contract is the lean loop contract served after Claude Code's identity.
const Contract = `You are an autonomous coding agent working in the user's repository through tools.
- Work in a loop: look at the latest tool result, act with a tool, look again.
- Read a file before you edit it; use Edit for small changes and Write for new files.
- After changing code, run the tests or the task's check and trust only real results.
- Never repeat a failed call unchanged: use the error to change approach.
- Results already shown in this conversation are current; a note may list results that were dropped to save space: repeat such a call if you need it again.
- When the task is done and proven by a tool result, stop and give a short summary.`

// coreTools are kept when tools are trimmed.
var coreTools = []string{"Read", "Write", "Edit", "MultiEdit", "Bash", "Grep", "Glob", "NotebookEdit", "TodoWrite"}

// Config is the engine's configuration.
type Config struct {
	// BudgetTokens is the world budget; 0 sizes it to the model's window.
	BudgetTokens int
	// ThresholdTokens is the quantization step; 0 derives it from the budget.
	ThresholdTokens int
	// TrimTools drops tool schemas outside the core set the conversation
	// has not called.
	TrimTools bool
	// Tokens estimates the tokens of a text; nil uses internal/tokens.
	Tokens func(string) int
	// Now stamps visibility exports; nil uses time.Now.
	Now func() time.Time
}

// FromConfig takes the projection keys of synaxi's configuration.
func FromConfig(c config.Projection) Config {
	return Config{BudgetTokens: c.BudgetTokens, ThresholdTokens: c.ThresholdTokens, TrimTools: c.TrimTools}
}

// resolved is a Config applied to one request's model.
type resolved struct {
	budget, threshold, ceiling int
	resultCap                  int // tail results above this are shortened once not current
	worldCap                   int // world command/search results above this are shortened
	tok                        func(string) int
}

// Window returns the context window of a model in tokens: 1M when the
// request opts into the long context beta, else 200K.
func Window(model string, beta string) int {
	if strings.Contains(beta, "context-1m") || strings.HasSuffix(model, "[1m]") {
		return 1_000_000
	}
	return 200_000
}

// outputCap is the size in tokens above which command and search output
// (never a Read) is kept as its head and tail, with a note on how to see
// the rest, once it is no longer the current turn: the model saw it in full
// while acting on it.
const outputCap = 1000

// Budget is the world budget for a model window when none is configured:
// 11% of the window. The served context swings between about half the
// budget and budget + threshold, so it averages about the budget; replayed
// over the real fixture session, budgets from 10% to 12% of a 200K window
// meet every target of the replay benchmark (README, "Replay benchmark")
// and 11% is their middle.
func Budget(window int) int { return window * 11 / 100 }

func (c Config) resolve(window int) resolved {
	r := resolved{budget: c.BudgetTokens, threshold: c.ThresholdTokens, tok: c.Tokens}
	if r.budget <= 0 {
		r.budget = Budget(window)
	}
	if r.threshold <= 0 {
		r.threshold = r.budget / 2
	}
	r.ceiling = r.budget + r.threshold
	r.resultCap, r.worldCap = outputCap, outputCap
	if r.tok == nil {
		r.tok = tokens.Estimate
	}
	return r
}

// Engine projects worker requests. It is safe for concurrent use. Its only
// state is a memo of folded conversation prefixes, an optimisation: a
// request whose prefix is not memoised is folded from its first message,
// to the same bytes.
type Engine struct {
	cfg  Config
	memo *memo
	keys hashKeys
}

// New returns an engine.
func New(cfg Config) *Engine {
	return &Engine{cfg: cfg, memo: newMemo(memoSize), keys: newHashKeys()}
}

// fold folds the request's messages, resuming from the longest memoised
// prefix, and memoises the state before the final message (the prefix the
// conversation's next request starts with).
func (e *Engine) fold(cfg resolved, raws []gjson.Result) (*fold, error) {
	key := fmt.Sprintf("%d/%d/%d/%d/%d", cfg.budget, cfg.threshold, cfg.ceiling, cfg.resultCap, cfg.worldCap)
	hashes := make([]prefixHash, len(raws))
	var prev prefixHash
	for i, m := range raws {
		h, err := e.keys.messageHash(prev, m, i)
		if err != nil {
			return nil, err
		}
		hashes[i], prev = h, h
	}
	var f *fold
	start := 0
	for i := len(raws) - 2; i >= 0 && f == nil; i-- {
		if st := e.memo.get(key, hashes[i]); st != nil {
			f, start = st.clone(), i+1
		}
	}
	if f == nil {
		f = newFold(cfg)
	}
	next := parseAhead(raws, start)
	defer next.stop()
	for i := start; i < len(raws); i++ {
		m, err := next.get(i)
		if err != nil {
			return nil, err
		}
		last := i == len(raws)-1
		if last && i > 0 {
			e.memo.put(key, hashes[i-1], f.clone())
		}
		if err := f.consume(m, last); err != nil {
			return nil, err
		}
	}
	if !hasRole(f.head, "user") {
		return nil, errors.New("request has no user message")
	}
	return f, nil
}

var _ gate.Projector = (*Engine)(nil)

// Result is a projection with its bookkeeping, for tests and the replay.
type Result struct {
	Body        []byte
	Stats       ledger.ProjectionStats
	Visibility  *visibility.Export
	Breakpoints int
	// StableMessages is the number of messages of the goal and snapshot
	// (the part that only changes at re-projection points).
	StableMessages int
	Reprojected    bool
}

// Project implements gate.Projector.
func (e *Engine) Project(ctx context.Context, in *gate.Input) (*gate.Output, error) {
	beta := ""
	if in.Header != nil {
		beta = in.Header.Get("anthropic-beta")
	}
	r, err := e.project(ctx, in.Body, beta)
	if err != nil {
		return nil, err
	}
	return &gate.Output{Body: r.Body, Stats: r.Stats, Visibility: r.Visibility}, nil
}

// ProjectBody projects one Messages request body. It works on a copy, so
// the caller may reuse body (what the engine remembers may point into it).
func (e *Engine) ProjectBody(ctx context.Context, body []byte, beta string) (*Result, error) {
	return e.project(ctx, gate.Parse(bytes.Clone(body)), beta)
}

// project projects a request body parsed once by the transport (or by
// ProjectBody).
func (e *Engine) project(ctx context.Context, in *gate.Body, beta string) (*Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// Validating a large body takes as long as splitting it into messages;
	// the two run side by side (gjson reads invalid JSON without failing,
	// and nothing it returns is used before the body is known valid).
	in.Check()
	body := in.Bytes()
	req := parseRequest(in.JSON())
	raws, err := splitMessages(req.messages)
	if !in.Valid() {
		return nil, errors.New("request body is not valid JSON")
	}
	if err != nil {
		return nil, err
	}
	model := req.model.String()
	cfg := e.cfg.resolve(Window(model, beta))
	f, err := e.fold(cfg, raws)
	if err != nil {
		return nil, err
	}
	out := f.served()
	ttl := clientTTL(body, req)
	sys, err := projectSystem(req.system)
	if err != nil {
		return nil, err
	}
	tools := projectTools(req.tools, e.cfg.TrimTools, out)
	bps := placeBreakpoints(sys, out, f, f.reminded)
	served := assemble(req, len(body), sys, tools, out, ttl)
	now := time.Now
	if e.cfg.Now != nil {
		now = e.cfg.Now
	}
	vis := f.visibility(now())
	stats := ledger.ProjectionStats{
		OriginalMessages: len(raws),
		ServedMessages:   len(out),
		OriginalBytes:    len(body),
		ServedBytes:      len(served),
		WorldEntries:     len(f.world.entries),
		Evicted:          len(f.world.evicted),
		Reprojected:      f.reprojected,
		Breakpoints:      bps,
		Note:             fmt.Sprintf("budget=%d ceiling=%d reprojections=%d evictions=%d snapshot=%d stable=%d", cfg.budget, cfg.ceiling, f.reprojections, f.evictions, len(f.snapList), f.stable),
	}
	return &Result{Body: served, Stats: stats, Visibility: vis, Breakpoints: bps,
		StableMessages: len(f.head) + len(f.snap), Reprojected: f.reprojected}, nil
}

// sysBlock is one system text block of the served request.
type sysBlock struct {
	text string
	bp   bool
}

// projectSystem keeps Claude Code's billing header and identity block, in
// their order, and appends the loop contract.
func projectSystem(sys gjson.Result) ([]sysBlock, error) {
	var out []sysBlock
	keep := func(t string) {
		if strings.HasPrefix(t, "x-anthropic-billing-header") || isIdentity(t) {
			out = append(out, sysBlock{text: t})
		}
	}
	switch {
	case sys.Type == gjson.String:
		// A single string: its identity line, if it starts with one.
		if line, _, _ := strings.Cut(sys.Str, "\n"); isIdentity(line) {
			out = append(out, sysBlock{text: line})
		}
	case sys.IsArray():
		sys.ForEach(func(_, b gjson.Result) bool {
			keep(b.Get("text").String())
			return true
		})
	}
	if !slices.ContainsFunc(out, func(b sysBlock) bool { return isIdentity(b.text) }) {
		out = append(out, sysBlock{text: "You are Claude Code, Anthropic's official CLI for Claude."})
	}
	return append(out, sysBlock{text: Contract}), nil
}

func isIdentity(t string) bool {
	return strings.HasPrefix(t, "You are Claude Code") || strings.HasPrefix(t, "You are a Claude agent")
}

// projectTools strips tool cache_control and, when trimming, keeps the core
// tools, deferred-loading placeholders and every tool the served messages
// call. The list is never emptied by trimming.
func projectTools(tools gjson.Result, trim bool, msgs []served) [][]byte {
	if !tools.IsArray() {
		return nil
	}
	called := map[string]bool{}
	if trim {
		for _, m := range msgs {
			for i, k := range m.kinds {
				if k == "tool_use" {
					called[gjson.GetBytes(m.blocks[i], "name").String()] = true
				}
			}
		}
	}
	var all, kept [][]byte
	tools.ForEach(func(_, t gjson.Result) bool {
		raw := stripCacheControl([]byte(t.Raw))
		all = append(all, raw)
		name := t.Get("name").String()
		if !trim || called[name] || slices.Contains(coreTools, name) || t.Get("defer_loading").Bool() || t.Get("type").Exists() {
			kept = append(kept, raw)
		}
		return true
	})
	if len(kept) == 0 {
		return all
	}
	return kept
}

// checkpointEvery is the spacing, in snapshot exchanges (two blocks each),
// of cache checkpoints: half the API's 20-block lookback.
const checkpointEvery = 10

// placeBreakpoints marks at most 4 byte-stable positions. In the tail: the
// write point W of this request — the end of the current turn when it will
// be re-served unchanged (its curated form is its full form; the volatile
// reminder after it is not covered), else the end of the assistant message
// it answers — and the previous request's write point R, re-served
// unchanged now, which this request reads exactly. Then the snapshot's last
// exchange, at a re-projection the end of the part of the snapshot the
// previous one already served (so the append-only snapshot is read, not
// rewritten), and the last system block. It returns how many were placed.
func placeBreakpoints(sys []sysBlock, msgs []served, f *fold, reminder bool) int {
	head, snapLen := len(f.head), len(f.snap)
	tailStart := head + snapLen
	n := 0
	markBlock := func(i, j int) bool {
		if n >= 4 || i < 0 || i >= len(msgs) || j < 0 || j >= len(msgs[i].blocks) {
			return false
		}
		m := &msgs[i]
		switch m.kinds[j] {
		case "thinking", "redacted_thinking":
			return false
		case "text":
			if gjson.GetBytes(m.blocks[j], "text").String() == "" {
				return false
			}
		}
		if m.bp == nil {
			m.bp = map[int]bool{}
		}
		if m.bp[j] {
			return false
		}
		m.bp[j] = true
		n++
		return true
	}
	markLast := func(i, skip int) {
		if i < 0 || i >= len(msgs) {
			return
		}
		for j := len(msgs[i].blocks) - 1 - skip; j >= 0; j-- {
			if markBlock(i, j) {
				return
			}
		}
	}
	// writePoint is the message whose end request-at-i writes: the user
	// message i itself when stable, else the assistant message before it.
	writePoint := func(i int) int {
		if i >= tailStart && msgs[i].role == "user" && msgs[i].stable {
			return i
		}
		if i-1 >= tailStart && msgs[i-1].role == "assistant" {
			return i - 1
		}
		return -1
	}
	last := len(msgs) - 1
	if msgs[last].role == "user" {
		skip := 0
		if reminder {
			skip = 1
		}
		if w := writePoint(last); w == last {
			markLast(w, skip)
		} else {
			markLast(w, 0)
		}
		// The previous turn: the user message before the assistant
		// message this turn answers.
		for p := last - 2; p >= tailStart; p-- {
			if msgs[p].role == "user" {
				markLast(writePoint(p), 0)
				break
			}
		}
	}
	if snapLen > 0 {
		markBlock(head+snapLen-1, 0)
		if f.reprojected && f.stable > 0 && 2*f.stable < snapLen {
			markBlock(head+2*f.stable-1, 0)
		}
	}
	// The spare slot: a checkpoint inside the stable part, cycling with the
	// step over the goal's end and every checkpointEvery-th exchange of the
	// snapshot. Written inside the read prefix, checkpoints cost nothing;
	// when a later rebuild keeps the snapshot's start, the breakpoint at its
	// stable end finds one within the 20-block lookback.
	if n < 4 {
		points := 1 + (len(f.snapList)-1)/checkpointEvery
		if len(f.snapList) == 0 {
			points = 1
		}
		if j := f.step % points; j == 0 {
			markLast(head-1, 0)
		} else {
			markBlock(head+2*checkpointEvery*j-1, 0)
		}
	}
	if n < 4 && len(sys) > 0 {
		sys[len(sys)-1].bp = true
		n++
	}
	return n
}

// assemble writes the served body: the client's top-level fields in their
// order with system, tools and messages replaced.
func assemble(req request, size int, sys []sysBlock, tools [][]byte, msgs []served, ttl string) []byte {
	cc := `{"type":"ephemeral"}`
	if ttl != "" {
		cc = `{"type":"ephemeral","ttl":"` + ttl + `"}`
	}
	var b bytes.Buffer
	b.Grow(size)
	b.WriteByte('{')
	first := true
	sep := func() {
		if !first {
			b.WriteByte(',')
		}
		first = false
	}
	req.top.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "system":
			sep()
			writeSystem(&b, sys, cc)
		case "tools":
			if len(tools) == 0 {
				return true // never send an empty tools list
			}
			sep()
			b.WriteString(`"tools":[`)
			b.Write(bytes.Join(tools, []byte(",")))
			b.WriteByte(']')
		case "tool_choice":
			if len(tools) == 0 {
				return true
			}
			sep()
			b.WriteString(k.Raw + ":" + v.Raw)
		case "messages":
			sep()
			b.WriteString(`"messages":[`)
			for i, m := range msgs {
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString(`{"role":`)
				b.Write(jsonString(m.role))
				if len(m.blocks) == 0 {
					b.WriteString(`,"content":""`)
					b.Write(m.extra)
					b.WriteByte('}')
					continue
				}
				b.WriteString(`,"content":[`)
				for j, blk := range m.blocks {
					if j > 0 {
						b.WriteByte(',')
					}
					if m.bp[j] {
						b.Write(blk[:len(blk)-1])
						b.WriteString(`,"cache_control":`)
						b.WriteString(cc)
						b.WriteByte('}')
					} else {
						b.Write(blk)
					}
				}
				b.WriteByte(']')
				b.Write(m.extra)
				b.WriteByte('}')
			}
			b.WriteByte(']')
		case "cache_control":
			// Top-level automatic caching would take a fifth slot.
		default:
			sep()
			b.WriteString(k.Raw + ":" + v.Raw)
		}
		return true
	})
	if !req.system.Exists() {
		// The identity and contract are always served.
		sep()
		writeSystem(&b, sys, cc)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// writeSystem writes the "system" field with its breakpoint.
func writeSystem(b *bytes.Buffer, sys []sysBlock, cc string) {
	b.WriteString(`"system":[`)
	for i, s := range sys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"type":"text","text":`)
		b.Write(jsonString(s.text))
		if s.bp {
			b.WriteString(`,"cache_control":` + cc)
		}
		b.WriteByte('}')
	}
	b.WriteByte(']')
}

// visibility lists the files whose content the served request shows, with
// their line ranges, and the files that were read but dropped.
func (f *fold) visibility(now time.Time) *visibility.Export {
	files := map[string]visibility.File{}
	for _, e := range f.world.entries {
		if e.path == "" || !f.inSnapshot(e.key) {
			continue
		}
		addRange(files, e.path, e.firstLine, e.lastLine)
	}
	for _, s := range f.tail {
		for i, k := range s.kinds {
			if k != "tool_result" {
				continue
			}
			id := gjson.GetBytes(s.blocks[i], "tool_use_id").String()
			u, ok := f.uses[id]
			if !ok || u.name != "Read" {
				continue
			}
			text, ref := f.refs[id]
			if !ref {
				text = gjson.GetBytes(s.blocks[i], "content").String()
			}
			_, first, last, _, ok := parseNumbered(text)
			if !ok {
				continue
			}
			addRange(files, u.input.Get("file_path").String(), first, last)
		}
	}
	for k := range f.world.evicted {
		path, _, _ := strings.Cut(k, "#")
		if strings.HasPrefix(k, "cmd:") || strings.HasPrefix(k, "grep:") || strings.HasPrefix(k, "glob:") {
			continue
		}
		fv := files[path]
		if len(fv.Visible) == 0 {
			fv.Evicted = true
		}
		files[path] = fv
	}
	return &visibility.Export{V: visibility.Version, Updated: now, Files: files}
}

func addRange(files map[string]visibility.File, path string, first, last int) {
	if path == "" || first <= 0 {
		return
	}
	fv := files[path]
	fv.Visible = append(fv.Visible, visibility.Range{Start: first, End: last})
	fv.Evicted = false
	files[path] = fv
}
