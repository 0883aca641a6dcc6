package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/synaxi/synaxi/internal/statefile"
	"github.com/synaxi/synaxi/internal/xdg"
)

// Counters are one session's no-reread totals, kept current by the hook so
// the status line and `synaxi savings` read them without parsing anything.
// They are estimates of what denied re-reads would have cost, kept apart
// from the measured rows of the ledger proper.
//
// They live in two files beside each other: noreread.json, the document
// (the governor's fires, rare, by a locked read-modify-write), and
// noreread.log, the counts a denial, a refund or a broken loop adds, one
// line each (AddCounts), appended without a lock on the hook's hot path.
// ReadCounters adds the log's lines to the document.
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

// CountsPath is a session's log of counts (AddCounts).
func CountsPath(d xdg.Dirs, session string) string {
	return d.StatePath("sessions", statefile.SafeName(session), "noreread.log")
}

// ReadCounters loads a session's counters, the log's counts added;
// errors.Is(err, fs.ErrNotExist) when the hook has counted nothing for it.
func ReadCounters(d xdg.Dirs, session string) (*Counters, error) {
	var c Counters
	jerr := statefile.ReadJSON(CountersPath(d, session), &c)
	if jerr != nil && !errors.Is(jerr, fs.ErrNotExist) {
		return nil, jerr
	}
	log, err := os.ReadFile(CountsPath(d, session))
	if err != nil {
		if jerr != nil {
			return nil, jerr // neither file
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("read counts: %w", err)
		}
	}
	for line := range bytes.SplitSeq(log, []byte{'\n'}) {
		if n, ok := ParseCounts(line); ok {
			c.add(n)
		}
	}
	if c.Session == "" {
		c.V, c.Session = Version, session
	}
	return &c, nil
}

// Counts are what one event adds to a session's counters.
type Counts struct {
	Denials, Refunds, Blocked, TokensSaved, LoopsBroken int64
}

func (c *Counters) add(n Counts) {
	c.Denials += n.Denials
	c.Refunds += n.Refunds
	c.Blocked += n.Blocked
	c.TokensSaved += n.TokensSaved
	c.LoopsBroken += n.LoopsBroken
}

// AddCounts appends n to a session's log of counts: one O_APPEND write of
// one line, "+ DENIALS REFUNDS BLOCKED TOKENS LOOPS_BROKEN", with no lock
// (appends to a local file do not interleave). The write starts with a
// newline, so a line a killed writer left torn stays apart and is skipped.
func AddCounts(d xdg.Dirs, session string, n Counts) error {
	file := CountsPath(d, session)
	line := fmt.Appendf(nil, "\n+ %d %d %d %d %d\n", n.Denials, n.Refunds, n.Blocked, n.TokensSaved, n.LoopsBroken)
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, statefile.FileMode)
	if errors.Is(err, fs.ErrNotExist) {
		if err = xdg.Ensure(filepath.Dir(file)); err == nil {
			f, err = os.OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, statefile.FileMode)
		}
	}
	if err != nil {
		return fmt.Errorf("open counts: %w", err)
	}
	_, werr := f.Write(line)
	if err := errors.Join(werr, f.Close()); err != nil {
		return fmt.Errorf("append counts: %w", err)
	}
	return nil
}

// ParseCounts reads one line of the log of counts; false for anything
// else (a blank or torn line).
func ParseCounts(line []byte) (Counts, bool) {
	f := strings.Fields(string(line))
	if len(f) != 6 || f[0] != "+" {
		return Counts{}, false
	}
	var v [5]int64
	for i := range v {
		n, err := strconv.ParseInt(f[i+1], 10, 64)
		if err != nil {
			return Counts{}, false
		}
		v[i] = n
	}
	return Counts{Denials: v[0], Refunds: v[1], Blocked: v[2], TokensSaved: v[3], LoopsBroken: v[4]}, true
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
