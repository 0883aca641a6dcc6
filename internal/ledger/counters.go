package ledger

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/synaxi/synaxi/internal/statefile"
	"github.com/synaxi/synaxi/internal/xdg"
)

// Counters are one session's no-reread totals, kept current by the hook so
// the status line and `synaxi savings` read them without parsing anything.
// They are estimates of what denied re-reads would have cost, kept apart
// from the measured rows of the ledger proper.
type Counters struct {
	V       int       `json:"v"`
	Session string    `json:"session"`
	Updated time.Time `json:"updated"`
	// Blocked is re-reads denied and not re-issued (denials minus refunds).
	Blocked int64 `json:"blocked"`
	// TokensSaved is the estimated tokens of those re-reads, net of refunds.
	TokensSaved int64 `json:"tokens_saved"`
	// Denials counts every re-read denial; Refunds the denials whose read was
	// re-issued through the escape grant.
	Denials int64 `json:"denials"`
	Refunds int64 `json:"refunds"`
	// LoopsBroken counts repeated commands denied by the loop breaker.
	LoopsBroken int64 `json:"loops_broken"`
	// Loops counts the governor's fires per rule (docs/governor.md), Stops
	// the fires that stopped the session (governor.mode on), and LastLoop
	// is the latest fire.
	Loops    map[string]int64 `json:"loops,omitempty"`
	Stops    int64            `json:"loop_stops,omitempty"`
	LastLoop *LoopFire        `json:"last_loop,omitempty"`
}

// LoopFire is one governor fire, as the hook recorded it (with the mode,
// agent and time) or as the proxy saw it in a request (a ledger row's
// Loops).
type LoopFire struct {
	Rule    string    `json:"rule"`
	Subject string    `json:"subject,omitempty"`
	Count   int       `json:"count"`
	Mode    string    `json:"mode,omitempty"`
	Agent   string    `json:"agent,omitempty"`
	At      time.Time `json:"at,omitzero"`
}

// LoopFires is the total of the governor's fires.
func (c *Counters) LoopFires() int64 {
	var n int64
	for _, v := range c.Loops {
		n += v
	}
	return n
}

// Empty reports whether nothing was counted yet.
func (c *Counters) Empty() bool { return c.Denials == 0 && c.LoopsBroken == 0 && c.LoopFires() == 0 }

// CountersPath is a session's counters file.
func CountersPath(d xdg.Dirs, session string) string {
	return d.StatePath("sessions", statefile.SafeName(session), "noreread.json")
}

// ReadCounters loads a session's counters; errors.Is(err, fs.ErrNotExist)
// when the hook has counted nothing for it.
func ReadCounters(d xdg.Dirs, session string) (*Counters, error) {
	var c Counters
	if err := statefile.ReadJSON(CountersPath(d, session), &c); err != nil {
		return nil, err
	}
	return &c, nil
}

// UpdateCounters applies fn to a session's counters under the lock. The
// write skips fsync (statefile.NoSync): it runs on the hook's hot path.
func UpdateCounters(d xdg.Dirs, session string, now time.Time, fn func(*Counters)) error {
	return statefile.Update(CountersPath(d, session), func(c *Counters) error {
		c.V = Version
		c.Session = session
		c.Updated = now
		fn(c)
		return nil
	}, statefile.NoSync)
}

// LoopTotals sums the governor's fires per rule over every session's
// counters, with the latest fire, for `synaxi status`. A counters file that
// does not decode is skipped.
func LoopTotals(d xdg.Dirs) (fires map[string]int64, stops int64, last *LoopFire, err error) {
	files, err := filepath.Glob(d.StatePath("sessions", "*", "noreread.json"))
	if err != nil {
		return nil, 0, nil, fmt.Errorf("list counters: %w", err)
	}
	fires = map[string]int64{}
	for _, f := range files {
		var c Counters
		if statefile.ReadJSON(f, &c) != nil {
			continue
		}
		for r, n := range c.Loops {
			fires[r] += n
		}
		stops += c.Stops
		if l := c.LastLoop; l != nil && (last == nil || l.At.After(last.At)) {
			last = l
		}
	}
	return fires, stops, last, nil
}
