package store

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// The lifecycle of an entry. Every entry starts as a Candidate; only a
// Confirmed entry is published (Entry.Published). A candidate the user
// rejects is deleted and leaves a tombstone, so it is never learned again.
const (
	Candidate = "candidate"
	Confirmed = "confirmed"
)

// Who confirmed an entry (Entry.ConfirmedBy).
const (
	// ByUser: the user accepted it (`synaxi profile review` or `accept`,
	// or the /synaxi:review MCP tools).
	ByUser = "user"
	// ByReinforcement: learning.publish = "reinforced" and typed quotes
	// from ReinforceAt distinct sessions support it.
	ByReinforcement = "reinforced"
)

// FlagDangerous marks a rule that tells the agent to do something no user
// durably means without saying so in review: destructive or
// security-weakening commands (recursive deletes, force pushes, disabling
// tests or checks, piping downloads to a shell, broad permission changes)
// or ignoring instructions. The screen (package screen) sets it; Reason says what it found.
// A flagged entry is confirmed only by the user (never by reinforcement),
// and review shows it with its reason as a warning.
const FlagDangerous = "dangerous"

// Flag is one finding of the screen about an entry's text or quotes.
type Flag struct {
	Kind   string `json:"kind"`   // FlagDangerous
	Reason string `json:"reason"` // what was found, for the user: "a recursive delete (rm -rf)"
}

// Published reports whether e may reach a coding agent: confirmed and not
// excluded. Every publisher (SessionStart, SubagentStart, the writers, the
// MCP profile tool) goes through it.
func (e *Entry) Published() bool { return e.State == Confirmed && !e.Excluded }

// Danger returns the reason of e's dangerous flag, or "".
func (e *Entry) Danger() string {
	for _, f := range e.Flags {
		if f.Kind == FlagDangerous {
			return f.Reason
		}
	}
	return ""
}

// addFlags adds the flags e does not have yet. A dangerous flag on an
// entry no user accepted makes it a candidate again.
func (e *Entry) addFlags(fs []Flag) {
	for _, f := range fs {
		if !slices.ContainsFunc(e.Flags, func(h Flag) bool { return h.Kind == f.Kind }) {
			e.Flags = append(e.Flags, f)
		}
	}
	if e.Danger() != "" && e.State == Confirmed && e.ConfirmedBy != ByUser {
		e.State, e.ConfirmedBy, e.ConfirmedAt = Candidate, "", time.Time{}
	}
}

// Sessions with evidence: how many distinct sessions e's quotes come from.
func (e *Entry) evidenceSessions() int {
	var seen []string
	for _, ev := range e.Evidence {
		if !slices.Contains(seen, ev.Session) {
			seen = append(seen, ev.Session)
		}
	}
	return len(seen)
}

// confirmByReinforcement confirms a project candidate whose quotes come
// from ReinforceAt distinct sessions, unless it is flagged dangerous.
// Global entries are never confirmed this way: whatever applies in every
// repository takes the user's acceptance.
func (e *Entry) confirmByReinforcement(at time.Time) bool {
	if e.State != Candidate || e.Scope != ScopeProject || e.Danger() != "" || e.evidenceSessions() < ReinforceAt {
		return false
	}
	e.State, e.ConfirmedBy, e.ConfirmedAt = Confirmed, ByReinforcement, at
	return true
}

// Published returns the entries that may be published in project: those
// of ForProject that are confirmed.
func (p *Profile) Published(project string) []Entry {
	return slices.DeleteFunc(p.ForProject(project), func(e Entry) bool { return !e.Published() })
}

// Candidates returns the candidates waiting for the user, in project (its
// own and global ones) or, with project "", everywhere; flagged ones and
// then the heaviest first.
func (p *Profile) Candidates(project string) []Entry {
	var out []Entry
	for _, e := range p.Entries {
		if e.State != Candidate || (project != "" && e.Scope == ScopeProject && e.Project != project) {
			continue
		}
		out = append(out, e.clone())
	}
	SortEntries(out)
	slices.SortStableFunc(out, func(a, b Entry) int {
		switch da, db := a.Danger() != "", b.Danger() != ""; {
		case da && !db:
			return -1
		case db && !da:
			return 1
		}
		return 0
	})
	return out
}

// migrate brings a profile written before the lifecycle existed up to it:
// an entry without a state is a candidate (nothing learned before the user
// could review it is published until they accept it), and a dangerous
// entry no user accepted is a candidate too.
func (p *Profile) migrate() {
	for i := range p.Entries {
		e := &p.Entries[i]
		if e.State == "" {
			e.State = Candidate
		}
		e.addFlags(nil)
	}
}

// Decision is what the user decided about one candidate (or confirmed
// entry) in review.
type Decision struct {
	// Verdict is Accept or Reject.
	Verdict string
	// Text, if not empty, replaces the entry's text with the user's own
	// wording as it is accepted.
	Text string
	// Global moves an accepted project entry to the global scope, where it
	// applies in every repository.
	Global bool
}

// Verdicts of a Decision.
const (
	Accept = "accept"
	Reject = "reject"
)

// Decide records the user's decision about the entry with id as one new
// version ("accept ID", "accept ID as global", "reject ID"), so history
// and rollback cover it. Accept confirms the entry (by the user, dangerous
// or not: the caller showed the warning); Reject deletes it and leaves a
// tombstone, so it is never learned again.
func (s *Store) Decide(id string, d Decision) (int, error) {
	switch d.Verdict {
	case Accept, Reject:
	default:
		return 0, fmt.Errorf("decision %q about %s: want %q or %q", d.Verdict, id, Accept, Reject)
	}
	if d.Verdict == Reject {
		return s.forget("reject", id)
	}
	reason := "accept " + id
	if d.Global {
		reason += " as global"
	}
	text := strings.TrimSpace(d.Text)
	if text != "" {
		reason += " edited"
	}
	return s.Update(reason, func(p *Profile) error {
		e := p.Find(id)
		if e == nil {
			return fmt.Errorf("entry %q: %w (see `synaxi profile review --json`)", id, ErrNotFound)
		}
		changed := false
		if text != "" && text != e.Text {
			e.Text, changed = text, true
		}
		if e.State != Confirmed || e.ConfirmedBy != ByUser {
			e.State, e.ConfirmedBy, e.ConfirmedAt = Confirmed, ByUser, s.now().UTC()
			changed = true
		}
		if d.Global && e.Scope != ScopeGlobal {
			makeGlobal(p, e)
			changed = true
		}
		if !changed {
			return ErrUnchanged
		}
		return nil
	})
}

// makeGlobal moves e to the global scope, folding it into an equal global
// entry if there is one (that entry keeps its id and gains e's sessions,
// projects and evidence).
func makeGlobal(p *Profile, e *Entry) {
	if e.Project != "" && !slices.Contains(e.Projects, e.Project) {
		e.Projects = append(e.Projects, e.Project)
	}
	for i := range p.Entries {
		g := &p.Entries[i]
		if g == e || g.Scope != ScopeGlobal || g.Dimension != e.Dimension || Similarity(g.Text, e.Text) < MatchAt {
			continue
		}
		for _, s := range e.Sessions {
			if !g.HasSession(s) {
				g.Sessions = append(g.Sessions, s)
			}
		}
		g.Count = len(g.Sessions)
		g.Weight = max(g.Weight, e.Weight)
		for _, ev := range e.Evidence {
			g.AddEvidence(ev)
		}
		for _, pr := range e.Projects {
			if !slices.Contains(g.Projects, pr) {
				g.Projects = append(g.Projects, pr)
			}
		}
		g.addFlags(e.Flags)
		g.State, g.ConfirmedBy, g.ConfirmedAt = Confirmed, ByUser, e.ConfirmedAt
		id := e.ID
		p.Entries = slices.DeleteFunc(p.Entries, func(x Entry) bool { return x.ID == id })
		return
	}
	e.Scope, e.Project = ScopeGlobal, ""
}
