// Package projection is synaxi's projection engine: it turns the worker's
// ever-growing Claude Code transcript into a bounded, cache-stable request.
//
// The served messages are the goal (everything before the first assistant
// message, verbatim), a snapshot of the world — durable observations keyed
// by identity (file path, `cmd:<command>`, search keys) re-emitted as paired
// tool_use/tool_result exchanges with deterministic ids — in generations,
// oldest first, each followed by a note naming what was dropped and how to
// get it back, and the tail: every message since the last re-projection,
// appended as the client sent it (once it is no longer the current turn, a
// result identical to one the request still shows becomes a reference to
// it, and large non-Read output is shortened). Operational memory rides in
// a <system-reminder> on the final message only.
//
// Re-projection happens only at deterministic points chosen by billed cost
// (generation.go): it rebuilds the generations from the cut that pays and
// re-serves those before it byte-identical. Between points request n+1
// re-serves request n's messages byte-identical, except the previous
// current turn, which takes its curated form exactly once. The engine
// engages only once the cost model predicts a saving, and engages or
// rebuilds only into a context the model's prompt cache can hold (its
// minimum cacheable length); until it engages it serves the client's body
// byte for byte. All of it is a pure function of the request (its model,
// messages, system prompt, tools and cache time to live) and the
// configuration: the fold is recomputed from the messages on every
// request, so a restarted proxy serves identical bytes.
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
	"github.com/synaxi/synaxi/proxyd/internal/projection/cachesim"
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
	// BudgetTokens pins the world budget; 0 sizes it to the model's window.
	BudgetTokens int
	// ThresholdTokens is how much the tail must grow before a
	// re-projection is considered; 0 derives it from the budget.
	ThresholdTokens int
	// TrimTools drops tool schemas outside the core set the conversation
	// has not called.
	TrimTools bool
	// AlwaysEngage projects from the first request on, whether or not
	// the cost model predicts a saving (tests of the served form).
	AlwaysEngage bool
	// Tokens estimates the tokens of a text; nil uses internal/tokens. It
	// must be safe for concurrent use (a long fold estimates ahead).
	Tokens func(string) int
	// Now stamps visibility exports; nil uses time.Now.
	Now func() time.Time
}

// FromConfig takes the projection keys of synaxi's configuration.
func FromConfig(c config.Projection) Config {
	return Config{BudgetTokens: c.BudgetTokens, ThresholdTokens: c.ThresholdTokens, TrimTools: c.TrimTools}
}

// resolved is a Config applied to one request: its model's window, its
// cache time to live and its system prompt and tools.
type resolved struct {
	budget    int // the world budget
	target    int // the snapshot's size after a re-projection
	threshold int // the tail size from which a re-projection is considered
	ceiling   int // the served size above which a re-projection is forced
	resultCap int // tail results above this are shortened once not current
	worldCap  int // world command/search results above this are shortened
	// writePrice is the billed weight of a cache write at the request's
	// time to live; overhead and origOverhead are the tokens of the
	// projected and the client's system prompt and tools.
	writePrice             float64
	overhead, origOverhead int
	// minCache is the model's minimum cacheable prompt length: a shorter
	// prefix is never cached, so every request pays for it in full.
	minCache int
	always   bool
	pinned   bool // the budget is configured, not sized
	tok      func(string) int
	span     spanFunc
}

// key identifies the parts of a resolved configuration the fold depends
// on, for the memo.
func (r resolved) key() string {
	return fmt.Sprintf("%d/%d/%d/%d/%d/%d/%g/%d/%d/%d/%t/%t", r.budget, r.target, r.threshold, r.ceiling, r.resultCap, r.worldCap,
		r.writePrice, r.overhead, r.origOverhead, r.minCache, r.always, r.pinned)
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
// (never a Read) is kept as its head and tail (about 400 bytes each), with
// a note stating the cut and how to see the rest, once it is no longer the
// current turn: the model saw it in full while acting on it. Chosen on the
// replay panel: 1,000, 400, 200 and 100 gave billed reductions of
// 1.79–2.22×, 1.79–2.28×, 1.86–2.26× and 1.87–2.37× on the four main
// sessions; 200 keeps more of each output for about the same saving.
const outputCap = 200

// Budget is the world budget for a model window when none is configured:
// 3.3% of the window (6,600 tokens of 200K). The snapshot a re-projection
// leaves follows the session's working set within 0.2 to 1.6 times it.
// Chosen on the whole replay panel (docs/projection.md).
func Budget(window int) int { return window * 33 / 1000 }

func (c Config) resolve(window int) resolved {
	r := resolved{budget: c.BudgetTokens, threshold: c.ThresholdTokens, tok: c.Tokens, always: c.AlwaysEngage}
	r.pinned = r.budget > 0
	if r.budget <= 0 {
		r.budget = Budget(window)
	}
	r.target = r.budget
	if r.threshold <= 0 {
		r.threshold = r.budget * 3 / 10
	}
	r.ceiling = 10 * r.budget
	r.resultCap, r.worldCap = outputCap, outputCap
	r.writePrice = 1.25
	if r.tok == nil {
		r.tok, r.span = tokens.Estimate, tokens.EstimateSpan
	} else {
		tok := r.tok
		r.span = func(s string, i, j int) (int, int) { return tok(s), tok(s[i:j]) }
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
// prefix. remember memoises the state before the final message (the
// prefix the conversation's next request starts with); the caller calls it
// once the body is known valid.
func (e *Engine) fold(cfg resolved, raws []gjson.Result) (f *fold, remember func(), err error) {
	key := cfg.key()
	hashes := make([]prefixHash, len(raws))
	var next *ahead
	defer func() {
		if next != nil {
			next.stop()
		}
	}()
	var prev prefixHash
	for i, m := range raws {
		h, err := e.keys.messageHash(prev, m, i)
		if err != nil {
			return nil, nil, err
		}
		hashes[i], prev = h, h
		if i == 0 && !e.memo.holds(key, h) {
			// Nothing memoised starts with this message (a cold fold):
			// the parser starts now, while the rest is hashed.
			next = parseAhead(raws, 0, cfg.span)
		}
	}
	start := 0
	if next == nil {
		for i := len(raws) - 2; i >= 0 && f == nil; i-- {
			if st := e.memo.get(key, hashes[i]); st != nil {
				f, start = st.clone(), i+1
			}
		}
		next = parseAhead(raws, start, cfg.span)
	}
	if f == nil {
		f = newFold(cfg)
	}
	remember = func() {}
	for i := start; i < len(raws); i++ {
		m, err := next.get(i)
		if err != nil {
			return nil, nil, err
		}
		last := i == len(raws)-1
		if last && i > 0 {
			st, h := f.clone(), hashes[i-1]
			remember = func() { e.memo.put(key, hashes[0], h, st) }
		}
		if err := f.consume(m, last); err != nil {
			return nil, nil, err
		}
	}
	if !hasRole(f.head, "user") {
		return nil, nil, errors.New("request has no user message")
	}
	return f, remember, nil
}

var _ gate.Projector = (*Engine)(nil)

var errInvalidBody = errors.New("request body is not valid JSON")

// validFirst reports an invalid body before err, which may only be a
// consequence of it.
func validFirst(in *gate.Body, err error) error {
	if !in.Valid() {
		return errInvalidBody
	}
	return err
}

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
	// Engaged is false when Body is the request as the client sent it,
	// byte for byte: the cost model predicts no saving yet.
	Engaged bool
	// Budget is the world budget the request was projected with.
	Budget int
	// Threshold is the tail size from which a re-projection is considered.
	Threshold int
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
	// it runs beside the split and the fold (gjson and fastjson read
	// invalid JSON without failing), and nothing they find is served or
	// memoised before the body is known valid.
	in.Check()
	body := in.Bytes()
	req := parseRequest(in)
	raws, err := splitMessages(req.messages)
	if err != nil {
		return nil, validFirst(in, err)
	}
	cfg := e.cfg.resolve(Window(req.model.String(), beta))
	ttl := clientTTL(body, req)
	if ttl == "1h" {
		cfg.writePrice = 2
	}
	cfg.minCache = cachesim.MinTokensFor(req.model.String())
	sys := projectSystem(req.system)
	cfg.overhead, cfg.origOverhead = overheads(cfg.tok, req, sys, e.cfg.TrimTools)
	f, remember, err := e.fold(cfg, raws)
	if err != nil {
		return nil, validFirst(in, err)
	}
	if !in.Valid() {
		return nil, errInvalidBody
	}
	remember()
	now := time.Now
	if e.cfg.Now != nil {
		now = e.cfg.Now
	}
	vis := f.visibility(now())
	stats := ledger.ProjectionStats{
		OriginalMessages: len(raws),
		OriginalBytes:    len(body),
		WorldEntries:     len(f.world.entries),
		Evicted:          len(f.world.evicted),
		Reprojected:      f.reprojected,
	}
	res := &Result{Visibility: vis, Reprojected: f.reprojected, Budget: cfg.budget, Threshold: cfg.threshold, Engaged: f.engaged()}
	if !f.engaged() {
		// Never cost more: the client's own body, byte for byte.
		stats.ServedMessages, stats.ServedBytes = len(raws), len(body)
		stats.NotEngaged = f.notEngagedReason()
		stats.Note = fmt.Sprintf("budget=%d threshold=%d", cfg.budget, cfg.threshold)
		res.Body, res.Stats = body, stats
		return res, nil
	}
	out := f.served()
	tools := projectTools(req.tools, e.cfg.TrimTools, out)
	bps := placeBreakpoints(sys, out, f)
	served := assemble(req, servedSize(sys, tools, out), sys, tools, out, ttl)
	stats.ServedMessages, stats.ServedBytes, stats.Breakpoints = len(out), len(served), bps
	stats.Note = fmt.Sprintf("budget=%d threshold=%d reprojections=%d evictions=%d generations=%d cut=%d snapshot=%d",
		cfg.budget, cfg.threshold, f.reprojections, f.evictions, len(f.gens), f.lastCut, len(f.where))
	res.Body, res.Stats, res.Breakpoints = served, stats, bps
	res.StableMessages = len(f.head)
	for _, g := range f.gens {
		res.StableMessages += len(g.msgs)
	}
	return res, nil
}

// overheads estimates the tokens of the projected system prompt and tools
// and of the client's.
func overheads(tok func(string) int, req request, sys []sysBlock, trim bool) (projected, original int) {
	for _, s := range sys {
		projected += tok(s.text)
	}
	for _, t := range projectTools(req.tools, trim, nil) {
		projected += tok(stringOf(t))
	}
	return projected, tok(req.system.Raw) + tok(req.tools.Raw)
}

// sysBlock is one system text block of the served request.
type sysBlock struct {
	text string
	bp   bool
}

// projectSystem keeps Claude Code's billing header and identity block, in
// their order, and appends the loop contract.
func projectSystem(sys gjson.Result) []sysBlock {
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
	return append(out, sysBlock{text: Contract})
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

// placeBreakpoints marks at most 4 byte-stable positions, in this order
// of priority: the tail's write point (see tailWritePoints), the end of
// every generation of the snapshot, youngest first (what a re-projection
// from a later cut reads), the end of the goal (what a rebuild of the
// whole snapshot reads), and the last system block. It returns how many
// were placed.
func placeBreakpoints(sys []sysBlock, msgs []served, f *fold) int {
	mk := &marker{msgs: msgs}
	end := len(f.head)
	ends := make([]int, len(f.gens))
	for i, g := range f.gens {
		end += len(g.msgs)
		ends[i] = end - 1
	}
	mk.tailWritePoints(end, f.reminded)
	for i := len(ends) - 1; i >= 0; i-- {
		mk.last(ends[i], 0)
	}
	mk.last(len(f.head)-1, 0)
	if mk.n < 4 && len(sys) > 0 {
		sys[len(sys)-1].bp = true
		mk.n++
	}
	return mk.n
}

// marker places breakpoints on served messages, at most four.
type marker struct {
	msgs []served
	n    int
}

// block marks block j of message i if it can carry a breakpoint (not a
// thinking block or an empty text) and has none yet.
func (mk *marker) block(i, j int) bool {
	if mk.n >= 4 || i < 0 || i >= len(mk.msgs) || j < 0 || j >= len(mk.msgs[i].blocks) {
		return false
	}
	m := &mk.msgs[i]
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
	mk.n++
	return true
}

// last marks the last markable block of message i, skipping its last
// skip blocks.
func (mk *marker) last(i, skip int) {
	if i < 0 || i >= len(mk.msgs) {
		return
	}
	for j := len(mk.msgs[i].blocks) - 1 - skip; j >= 0; j-- {
		if mk.block(i, j) {
			return
		}
	}
}

// tailWritePoints marks the write point W of this request — the end of
// the current turn when it will be re-served unchanged (its curated form
// is its full form; the volatile reminder after it is not covered), else
// the end of the assistant message it answers — and, when it lies too
// far back for W's read to find it, the previous request's write point,
// which this request reads exactly. tailStart is the tail's first message.
func (mk *marker) tailWritePoints(tailStart int, reminder bool) {
	last := len(mk.msgs) - 1
	if last < 0 || mk.msgs[last].role != "user" {
		return
	}
	skip := 0
	if w := mk.writePoint(tailStart, last); w == last {
		if reminder {
			skip = 1
		}
		mk.last(w, skip)
	} else {
		mk.last(w, 0)
	}
	// The previous turn: the user message before the assistant message
	// this turn answers.
	for p := last - 2; p >= tailStart; p-- {
		if mk.msgs[p].role != "user" {
			continue
		}
		if r := mk.writePoint(tailStart, p); r >= 0 && mk.blocksBetween(r, last) >= cacheLookback-2 {
			mk.last(r, 0)
		}
		break
	}
}

// cacheLookback is how many blocks back a breakpoint's read looks for an
// earlier write.
const cacheLookback = 20

// writePoint is the message whose end the request ending at message i
// writes: i itself when its curated form is its full form, else the
// assistant message before it; -1 when neither is in the tail.
func (mk *marker) writePoint(tailStart, i int) int {
	if i >= tailStart && mk.msgs[i].role == "user" && mk.msgs[i].stable {
		return i
	}
	if i-1 >= tailStart && mk.msgs[i-1].role == "assistant" {
		return i - 1
	}
	return -1
}

// blocksBetween counts the blocks after message i up to message j.
func (mk *marker) blocksBetween(i, j int) int {
	n := 0
	for k := i + 1; k <= j; k++ {
		n += len(mk.msgs[k].blocks)
	}
	return n
}

// servedSize is about the size of the served body: its system text,
// tools and messages, and room for the client's other fields and the
// JSON around them.
func servedSize(sys []sysBlock, tools [][]byte, msgs []served) int {
	n := 4096
	for _, s := range sys {
		n += len(s.text) + 64
	}
	for _, t := range tools {
		n += len(t) + 1
	}
	for _, m := range msgs {
		n += len(m.extra) + 32
		for _, b := range m.blocks {
			n += len(b) + 48
		}
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
	for _, field := range req.top {
		k, v := field.Key, field.Value
		switch k.Str {
		case "system":
			sep()
			writeSystem(&b, sys, cc)
		case "tools":
			if len(tools) == 0 {
				continue // never send an empty tools list
			}
			sep()
			b.WriteString(`"tools":[`)
			b.Write(bytes.Join(tools, []byte(",")))
			b.WriteByte(']')
		case "tool_choice":
			if len(tools) == 0 {
				continue
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
	}
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
			first, last, _, ok := numberedRange(text)
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
