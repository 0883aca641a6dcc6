// Package savings turns the proxy's ledger into the `synaxi savings` report
// and the `synaxi report` HTML page, and replays the user's own recent
// Claude Code sessions for `synaxi savings --replay` (replay.go).
//
// Every figure comes from ledger rows: savings only from rows with a
// count_tokens counterfactual and a successful response. Rows whose probe
// failed are counted and excluded; fail-open rows (the proxy forwarded the
// original request after a fault) are counted and excluded from savings too,
// since nothing was projected for them.
//
// The replay never imports the proxy: it runs `synaxi-proxyd replay --json`
// (schema 1) once per transcript and reads the fields it shows; a
// transcript that cannot be replayed is named with the reason, not fatal.
// Median and worst are over the conversations the projection touched
// (engaged at least once); the others are listed as not touched.
package savings

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/synaxi/synaxi/internal/ledger"
	"github.com/synaxi/synaxi/internal/statefile"
	"github.com/synaxi/synaxi/internal/xdg"
)

// Report is the savings of each session and in total.
type Report struct {
	Sessions []*Session   `json:"sessions"` // newest first
	Total    *Session     `json:"total"`
	Rows     []ledger.Row `json:"-"`
	Skipped  int          `json:"skipped_lines"`   // malformed or torn ledger lines
	Route    *Route       `json:"route,omitempty"` // routing and the proxy's counters; nil: not looked at
}

// Session is one session's (or the total's) figures.
type Session struct {
	ledger.Summary
	FailOpenRows int64   `json:"fail_open_rows"`
	SavedPercent float64 `json:"saved_percent"` // of the counterfactual, measured rows only
	CacheHit     float64 `json:"cache_hit_ratio"`
}

// Load reads every ledger row.
func Load(d xdg.Dirs) ([]ledger.Row, int, error) {
	var rows []ledger.Row
	skipped, err := statefile.ScanJSONL(ledger.Path(d), func(line []byte) error {
		var r ledger.Row
		if json.Unmarshal(line, &r) != nil {
			return nil
		}
		rows = append(rows, r)
		return nil
	})
	return rows, skipped, err
}

// Build folds rows into a report; session filters to one session ("" = all).
func Build(rows []ledger.Row, session string) *Report {
	by := map[string]*Session{}
	total := &Session{}
	rep := &Report{Total: total}
	for _, r := range rows {
		if session != "" && r.Session != session {
			continue
		}
		rep.Rows = append(rep.Rows, r)
		s := by[r.Session]
		if s == nil {
			s = &Session{}
			by[r.Session] = s
			rep.Sessions = append(rep.Sessions, s)
		}
		for _, x := range []*Session{s, total} {
			x.add(r)
		}
	}
	total.Session = "total"
	for _, s := range append(rep.Sessions, total) {
		s.finish()
	}
	sort.SliceStable(rep.Sessions, func(i, j int) bool { return rep.Sessions[i].Updated.After(rep.Sessions[j].Updated) })
	return rep
}

func (s *Session) add(r ledger.Row) {
	if r.FailOpen {
		// Nothing was projected: ledger.Summary keeps its usage and leaves
		// it out of savings and probe failures.
		s.FailOpenRows++
	}
	s.Summary.Add(&r)
}

func (s *Session) finish() {
	if s.Counterfactual > 0 {
		s.SavedPercent = 100 * float64(s.SavedTokens) / float64(s.Counterfactual)
	}
	s.CacheHit, _ = s.CacheHitRatio()
}

// WriteText prints the report for people.
func (rep *Report) WriteText(w io.Writer) error {
	if len(rep.Sessions) == 0 {
		return rep.Route.writeEmpty(w)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, s := range rep.Sessions {
		writeSession(tw, s)
	}
	if len(rep.Sessions) > 1 {
		writeSession(tw, rep.Total)
	}
	if rep.Skipped > 0 {
		fmt.Fprintf(tw, "(%d malformed ledger lines skipped)\n", rep.Skipped)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	rep.Route.writeCounts(w)
	return nil
}

func writeSession(w io.Writer, s *Session) {
	u, m := s.All, s.MeasuredUsage
	title := "session " + s.Session
	if s.Session == "total" {
		title = "TOTAL"
	}
	fmt.Fprintf(w, "%s\t%s\n", title, s.Model)
	fmt.Fprintf(w, "  requests\t%d (projected %d, measured %d)\n", s.Requests, s.Projected, s.Measured)
	fmt.Fprintf(w, "  billed, all requests\tinput %s · cache write 5m %s · cache write 1h %s · cache read %s · output %s\n",
		n(u.Input), n(u.CacheWrite5m), n(u.CacheWrite1h), n(u.CacheRead), n(u.Output))
	fmt.Fprintf(w, "  measured requests\tcounterfactual %s input tokens · billed %s (input %s · write %s · read %s)\n",
		n(s.Counterfactual), n(m.BilledInput()), n(m.Input), n(m.CacheWrite5m+m.CacheWrite1h), n(m.CacheRead))
	fmt.Fprintf(w, "  saved\t%s tokens (%.1f%% of counterfactual) · $%.4f cache-aware\n", n(s.SavedTokens), s.SavedPercent, s.SavedUSD)
	fmt.Fprintf(w, "  cache hit ratio\t%.1f%%\n", 100*s.CacheHit)
	fmt.Fprintf(w, "  excluded from savings\t%d probe failures · %d fail-opens\n", s.ProbeFailures, s.FailOpenRows)
}

// n formats a token count with thousands separators.
func n(v int64) string {
	s := fmt.Sprint(v)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// WriteJSON prints the report as JSON.
func (rep *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}
