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
// it, large non-Read output is shortened, and a whole-file Read the
// session passes through — while the session so far rarely came back to
// its reads two turns or more later — is folded to a line naming it once
// the next assistant message did not name its file). Operational memory
// rides in a <system-reminder> on the final message only.
//
// Re-projection happens only at deterministic points chosen by billed cost
// (generation.go): it rebuilds the generations from the cut that pays and
// re-serves those before it byte-identical. Between points request n+1
// re-serves request n's messages byte-identical, except the previous
// current turn, which takes its curated form exactly once. The engine
// engages only once the cost model predicts a saving, and engages or
// rebuilds only into a context the model's prompt cache can hold (its
// minimum cacheable length); until it engages it serves the client's body
// byte for byte but for the tool roster, which is the engaged one from the
// first request (tools.go), so engaging keeps the cached tools; a first
// call of a stubbed tool, which re-writes the whole prefix anyway, is a
// point where it engages or rebuilds when that serves less. All of it is
// a pure function of the request (its model,
// messages, system prompt, tools and cache time to live) and the
// configuration: the fold is recomputed from the messages on every
// request, so a restarted proxy serves identical bytes.
//
// The user's words (and command and skill expansions, and system notes)
// are written once and then only read: a re-projection never renders
// them inside a rebuilt generation, but appends them at its cut — to the
// goal message's dialogue for a rebuild from cut 0, else to the end of the
// generation before the cut — so every byte before them is re-served as
// it was. Each is written by at most two rebuilds (the one that folds it
// and, when that one kept an older generation, the first later rebuild
// from cut 0, which moves it into the goal's dialogue); in the goal's
// dialogue nothing rewrites it. The cost model counts them in what a
// rebuild writes (TestUserWordsWrittenOnceByRebuilds).
//
// The files by concern: projection.go the Engine and one request's path;
// config.go the configuration resolved for a request; fold.go the folded
// state and how each message enters it; observe.go and world.go the
// world of observations; reproject.go and generation.go the cost model
// and the rebuild; render.go and curate.go the served form of snapshot
// and tail; dedupe.go references to identical results; pass.go reads the
// session passes through; memory.go
// operational memory; system.go, tools.go, breakpoints.go and
// assemble.go the served body around the messages; visibility.go the
// visibility export.
package projection

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tidwall/gjson"

	"github.com/synaxi/synaxi/internal/ledger"
	"github.com/synaxi/synaxi/internal/visibility"
	"github.com/synaxi/synaxi/proxyd/internal/gate"
	"github.com/synaxi/synaxi/proxyd/internal/projection/cachesim"
)

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
	// byte for byte but for its tool roster: the cost model predicts no
	// saving yet.
	Engaged bool
	// Budget is the world budget the request was projected with.
	Budget int
	// Threshold is the tail size from which a re-projection is considered.
	Threshold int
	// Recall are the command and search outputs this request's fold
	// evicted, each named in a note by its reference (internal/recall).
	Recall []string
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
	return &gate.Output{Body: r.Body, Stats: r.Stats, Visibility: r.Visibility, Recall: r.Recall}, nil
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
	cfg.minCache = cachesim.MinTokensFor(req.model.String())
	sys := projectSystem(req.system)
	cfg.fit(req, sys, e.cfg.roster())
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
	res := &Result{Visibility: vis, Reprojected: f.reprojected, Budget: cfg.budget, Threshold: cfg.threshold, Engaged: f.engaged(),
		Recall: f.world.recalled}
	if !f.engaged() {
		// Never cost more: the client's own body, byte for byte, but for
		// the tool roster, which stays the engaged one's so that engaging
		// keeps the cached tools (tools.go).
		if cfg.roster != "" {
			body = withTools(req, len(body), projectTools(req.tools, e.cfg.roster(), f.called))
		}
		stats.ServedMessages, stats.ServedBytes = len(raws), len(body)
		stats.NotEngaged = f.notEngagedReason()
		stats.Note = fmt.Sprintf("budget=%d threshold=%d", cfg.budget, cfg.threshold)
		res.Body, res.Stats = body, stats
		return res, nil
	}
	out := f.served()
	tools := projectTools(req.tools, e.cfg.roster(), f.called)
	bps := placeBreakpoints(sys, out, f)
	stats.ClientTTL = clientTTL(body, req)
	cc := newMarks(stats.ClientTTL, len(f.head)+len(f.dialogue)-1)
	served := assemble(req, servedSize(sys, tools, out), sys, tools, out, cc)
	stats.ServedMessages, stats.ServedBytes, stats.Breakpoints = len(out), len(served), bps
	stats.Note = fmt.Sprintf("budget=%d threshold=%d reprojections=%d evictions=%d generations=%d cut=%d snapshot=%d",
		cfg.budget, cfg.threshold, f.reprojections, f.evictions, len(f.gens), f.lastCut, len(f.where))
	res.Body, res.Stats, res.Breakpoints = served, stats, bps
	res.StableMessages = len(f.head) + len(f.dialogue)
	for _, g := range f.gens {
		res.StableMessages += len(g.msgs)
	}
	return res, nil
}
