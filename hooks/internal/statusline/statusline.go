// Package statusline renders synaxi's status line: model · directory ·
// what synaxi measured this session (proxy savings in tokens and dollars,
// cache-hit ratio, re-reads blocked, loops broken, the loop governor's
// mark) and the proxy's state.
//
// It reads only precomputed per-session summaries (the ledger summary the
// proxy keeps and the no-reread hook's counters); it never parses a
// transcript or the ledger itself.
package statusline

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/synaxi/synaxi/internal/ledger"
)

// Proxy is the proxy's state as far as this session is concerned.
type Proxy int

const (
	// NotRouted: this session's traffic does not go through synaxi's proxy.
	NotRouted Proxy = iota
	// Routed: it does, and the proxy is running.
	Routed
	// Down: it does, but the proxy is not running.
	Down
)

// Facts is everything one line shows.
type Facts struct {
	Model    string
	Dir      string
	Summary  *ledger.Summary  // nil: the proxy measured nothing for the session
	Counters *ledger.Counters // nil: the no-reread hook counted nothing
	Proxy    Proxy
	Color    bool
}

const (
	sgrReset  = "\x1b[0m"
	sgrDim    = "\x1b[2m"
	sgrGreen  = "\x1b[32m"
	sgrYellow = "\x1b[33m"
	sgrRed    = "\x1b[31m"
	sgrCyan   = "\x1b[36m"
)

// Render returns the line, without a trailing newline.
func Render(f Facts) string {
	paint := func(sgr, s string) string {
		if !f.Color || s == "" {
			return s
		}
		return sgr + s + sgrReset
	}
	var head []string
	if f.Model != "" {
		head = append(head, paint(sgrCyan, f.Model))
	}
	if f.Dir != "" {
		head = append(head, filepath.Base(f.Dir))
	}

	var parts []string
	measured := false
	if s := f.Summary; s != nil {
		if s.Measured > 0 {
			measured = true
			if s.SavedTokens >= 0 {
				parts = append(parts, paint(sgrGreen, fmt.Sprintf("saved %s tok (%s)", Tokens(s.SavedTokens), Dollars(s.SavedUSD))))
			} else {
				parts = append(parts, paint(sgrYellow, fmt.Sprintf("overhead %s tok (%s)", Tokens(-s.SavedTokens), Dollars(s.SavedUSD))))
			}
		}
		if r, ok := s.CacheHitRatio(); ok {
			measured = true
			parts = append(parts, fmt.Sprintf("cache %d%%", int(math.Round(100*r))))
		}
	}
	if c := f.Counters; c != nil && !c.Empty() {
		measured = true
		if c.Blocked > 0 {
			parts = append(parts, paint(sgrGreen, fmt.Sprintf("%d %s blocked (~%s tok)", c.Blocked, plural(c.Blocked, "re-read", "re-reads"), Tokens(c.TokensSaved))))
		}
		if c.LoopsBroken > 0 {
			parts = append(parts, fmt.Sprintf("%d %s broken", c.LoopsBroken, plural(c.LoopsBroken, "loop", "loops")))
		}
		if mark := loopMark(c); mark != "" {
			parts = append(parts, paint(sgrYellow, mark))
		}
	}
	if !measured {
		parts = append(parts, paint(sgrDim, "watching"))
	}
	switch f.Proxy {
	case Routed:
		parts = append(parts, paint(sgrDim, "routed"))
	case Down:
		parts = append(parts, paint(sgrRed, "proxy down"))
	default:
		parts = append(parts, paint(sgrDim, "not routed"))
	}
	if s := f.Summary; s != nil && s.FailOpens > 0 {
		parts = append(parts, paint(sgrRed, fmt.Sprintf("%d %s", s.FailOpens, plural(s.FailOpens, "fail-open", "fail-opens"))))
	}
	ours := "⌁ synaxi " + strings.Join(parts, " · ")
	return strings.Join(append(head, ours), " · ")
}

// loopMark is the loop governor's mark: how many loops it flagged (or
// stopped, with governor.mode on) and the rule of the latest.
func loopMark(c *ledger.Counters) string {
	n := c.LoopFires()
	if n == 0 {
		return ""
	}
	rule := ""
	if c.LastLoop != nil {
		rule = ": " + c.LastLoop.Rule
	}
	if c.Stops > 0 {
		return fmt.Sprintf("⟳ %d %s stopped%s", c.Stops, plural(c.Stops, "loop", "loops"), rule)
	}
	return fmt.Sprintf("⟳ %d %s flagged%s", n, plural(n, "loop", "loops"), rule)
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Tokens formats a token count: 950, 4.1k, 12.4k, 3.1M.
func Tokens(n int64) string {
	sign := ""
	if n < 0 {
		sign, n = "−", -n
	}
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%s%.1fM", sign, float64(n)/1e6)
	case n >= 1_000:
		return fmt.Sprintf("%s%.1fk", sign, float64(n)/1e3)
	default:
		return fmt.Sprintf("%s%d", sign, n)
	}
}

// Dollars formats a signed dollar amount: $1.24, $0.03, $0.004, −$0.02.
func Dollars(v float64) string {
	sign := ""
	if v < 0 {
		sign, v = "−", -v
	}
	switch {
	case v == 0:
		return "$0"
	case v >= 0.01:
		return fmt.Sprintf("%s$%.2f", sign, v)
	default:
		return fmt.Sprintf("%s$%.3f", sign, v)
	}
}
