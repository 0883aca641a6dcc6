package projection

import (
	"fmt"
	"strings"
	"time"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/tokens"
)

// Config is the engine's configuration.
type Config struct {
	// BudgetTokens pins the world budget; 0 sizes it to the model's window.
	BudgetTokens int
	// ThresholdTokens is how much the tail must grow before a
	// re-projection is considered; 0 derives it from the budget.
	ThresholdTokens int
	// TrimTools leaves out the tools outside the core set the conversation
	// has never called, but for synaxi's recall tool (see tools.go).
	TrimTools bool
	// StubTools serves those tools as stubs until their first call.
	StubTools bool
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
	return Config{BudgetTokens: c.BudgetTokens, ThresholdTokens: c.ThresholdTokens, TrimTools: c.TrimTools, StubTools: c.StubTools}
}

// resolved is a Config applied to one request: its model's window and
// its system prompt and tools.
type resolved struct {
	budget    int // the world budget
	target    int // the snapshot's size after a re-projection
	threshold int // the tail size from which a re-projection is considered
	ceiling   int // the served size above which a re-projection is forced
	resultCap int // tail results above this are shortened once not current
	worldCap  int // world command/search results above this are shortened
	// overhead and origOverhead are the tokens of the projected and the
	// client's system prompt and tools.
	overhead, origOverhead int
	// minCache is the model's minimum cacheable prompt length: a shorter
	// prefix is never cached, so every request pays for it in full.
	minCache int
	// shortened holds the tools the roster serves shortened until their
	// first call (tools.go), and roster names them for the memo's key.
	shortened map[string]bool
	roster    string
	always    bool
	pinned    bool // the budget is configured, not sized
	tok       func(string) int
	span      spanFunc
}

// key identifies the parts of a resolved configuration the fold depends
// on, for the memo.
func (r resolved) key() string {
	return fmt.Sprintf("%d/%d/%d/%d/%d/%d/%d/%d/%d/%t/%t/%s", r.budget, r.target, r.threshold, r.ceiling, r.resultCap, r.worldCap,
		r.overhead, r.origOverhead, r.minCache, r.always, r.pinned, r.roster)
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
// replay panel (docs/projection.md, "Tuning history").
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
	if r.tok == nil {
		r.tok, r.span = tokens.Estimate, tokens.EstimateSpan
	} else {
		tok := r.tok
		r.span = func(s string, i, j int) (int, int) { return tok(s), tok(s[i:j]) }
	}
	return r
}
