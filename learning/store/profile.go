// Package store holds what synaxi has learned about its user: evidence-backed
// entries in nine dimensions, global or per project, in one versioned store.
//
// # Data
//
// A Profile is a list of Entry values plus the ledger of sessions already
// merged into it and the tombstones of forgotten entries. Every Entry carries
// its Evidence: the session, message uuid, timestamp and a verbatim quote of a
// human-typed turn that supports it. An entry's Count is the number of
// distinct sessions that reinforced it (Sessions holds them all, so a session
// is never counted twice); Evidence is capped at MaxEvidence, newest kept.
// Scope is ScopeGlobal or ScopeProject; a project entry names its Project, the
// repository root the session ran in.
//
// # Lifecycle
//
// Every new entry is a Candidate. Only a Confirmed entry is published
// (Entry.Published, Profile.Published): the user confirms it in review
// (Store.Decide), or, with learning.publish = "reinforced", Merge confirms
// a project candidate once typed quotes from ReinforceAt distinct sessions
// support it. An entry flagged dangerous (FlagDangerous) is confirmed only
// by the user; nothing moves to the global scope but by the user's
// decision. A rejected candidate leaves a tombstone and is never learned
// again. A confirmed entry never decays and is never pruned: only the user
// removes it. A candidate decays by the later sessions of its project
// (never by calendar time) and is pruned only after review has shown it
// (Entry.ShownAt), each prune recorded in Profile.Pruned; Merge's result
// does not depend on the order sessions arrive in. Entries of a profile written before the lifecycle load as
// candidates.
//
// # Store
//
// A Store lives in one directory (by default $XDG_DATA_HOME/synaxi/profile):
//
//	profile.json          the current version
//	profile.json.lock     sidecar lock taken by every writer
//	history/v000042.json  every saved version, whole (the newest HistoryKeep)
//
// Load reads the current version without locking (writes are atomic, so a
// reader never sees a torn file). Update runs a read-modify-write under the
// lock: the callback edits a copy and, if it returns nil, the store writes
// the result as a new version (history first, then profile.json, each by
// atomic rename), so a process killed at any point leaves a whole profile.
// A callback returning ErrUnchanged writes nothing.
//
// Decide, Rollback, Edit, Forget, Exclude, Include and Reset are Updates too: each
// creates a new version, and the history keeps the old ones, so every change
// can itself be rolled back. Forget also leaves a tombstone so the same
// observation is not learned again from later sessions; Exclude keeps the
// entry (and goes on reinforcing it) but marks it as not to be published;
// Edit changes only an entry's text. Merge folds one session's grounded
// observations in (see Merge for its arithmetic).
//
// # Publication hook
//
// Every mutating method returns the new version number (0 with ErrUnchanged
// when nothing was written). The store never publishes by itself: the caller
// runs publication after a change returns, outside the lock, with the
// version it got, so a slow or failing publisher never holds up or rolls
// back a profile write.
package store

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Scopes of an entry.
const (
	ScopeGlobal  = "global"
	ScopeProject = "project"
)

// The nine dimensions an entry belongs to.
const (
	Expertise     = "expertise"
	Communication = "communication"
	Workflow      = "workflow"
	CodeStyle     = "code_style"
	Expectations  = "expectations"
	Triggers      = "triggers"
	Values        = "values"
	AIFailures    = "ai_failures"
	Guards        = "guards"
)

// Dimensions lists the nine dimensions in their canonical order.
var Dimensions = []string{
	Expertise, Communication, Workflow, CodeStyle, Expectations,
	Triggers, Values, AIFailures, Guards,
}

// ValidDimension reports whether d is one of the nine dimensions.
func ValidDimension(d string) bool { return slices.Contains(Dimensions, d) }

// MaxEvidence caps the evidence an entry keeps; the newest are kept.
const MaxEvidence = 8

// Evidence is one quote that supports an entry.
type Evidence struct {
	Session   string    `json:"session"`
	UUID      string    `json:"uuid"`
	Timestamp time.Time `json:"timestamp"`
	Quote     string    `json:"quote"`
	Project   string    `json:"project,omitempty"`
	// Context is what the assistant had just done when the user said it
	// ("after the assistant ran git push"), taken from the transcript's
	// tool calls, never from injected text.
	Context string `json:"context,omitempty"`
	// Answered is the assistant's message the quote answered (scrubbed,
	// clipped), taken from the transcript; review shows it beside the
	// quote. It is never evidence and never published.
	Answered string `json:"answered,omitempty"`
}

// Entry is one learned observation.
type Entry struct {
	ID        string     `json:"id"`
	Scope     string     `json:"scope"`
	Project   string     `json:"project,omitempty"`
	Dimension string     `json:"dimension"`
	Text      string     `json:"text"`
	Weight    float64    `json:"weight"`
	Count     int        `json:"count"`
	Sessions  []string   `json:"sessions"`
	Projects  []string   `json:"projects,omitempty"`
	FirstSeen time.Time  `json:"first_seen"`
	LastSeen  time.Time  `json:"last_seen"`
	Evidence  []Evidence `json:"evidence"`
	Excluded  bool       `json:"excluded,omitempty"`
	// State is Candidate or Confirmed (see the lifecycle in lifecycle.go);
	// a profile written before the lifecycle has none and loads as
	// Candidate.
	State       string    `json:"state"`
	ConfirmedBy string    `json:"confirmed_by,omitempty"` // ByUser or ByReinforcement
	ConfirmedAt time.Time `json:"confirmed_at,omitzero"`
	Flags       []Flag    `json:"flags,omitempty"`
	// Peak is the highest confidence a session gave the entry and Rest
	// the product of (1 − 0.4·c) over the other sessions' confidences c;
	// the weight is computed from them (see Merge), so it does not depend
	// on the order sessions were merged in.
	Peak float64 `json:"peak,omitempty"`
	Rest float64 `json:"rest,omitempty"`
	// ShownAt is when review first listed this candidate to the user; a
	// candidate nobody has seen is never pruned.
	ShownAt time.Time `json:"shown_at,omitzero"`
	// Conflicts is the id of an entry the user accepted that this
	// candidate says the opposite of; review shows both.
	Conflicts string `json:"conflicts,omitempty"`
}

// HasSession reports whether session already reinforced e.
func (e *Entry) HasSession(session string) bool { return slices.Contains(e.Sessions, session) }

// AddEvidence appends ev unless the same message is already cited, keeping
// the newest MaxEvidence by timestamp.
func (e *Entry) AddEvidence(ev Evidence) {
	for _, have := range e.Evidence {
		if have.Session == ev.Session && have.UUID == ev.UUID && have.Quote == ev.Quote {
			return
		}
	}
	e.Evidence = append(e.Evidence, ev)
	slices.SortStableFunc(e.Evidence, func(a, b Evidence) int { return a.Timestamp.Compare(b.Timestamp) })
	if n := len(e.Evidence); n > MaxEvidence {
		e.Evidence = slices.Delete(e.Evidence, 0, n-MaxEvidence)
	}
}

// Validate checks the invariants every stored entry holds.
func (e *Entry) Validate() error {
	switch {
	case e.ID == "":
		return fmt.Errorf("entry has no id")
	case e.Scope != ScopeGlobal && e.Scope != ScopeProject:
		return fmt.Errorf("entry %s: scope %q is neither %q nor %q", e.ID, e.Scope, ScopeGlobal, ScopeProject)
	case e.Scope == ScopeProject && e.Project == "":
		return fmt.Errorf("entry %s: project scope without a project", e.ID)
	case !ValidDimension(e.Dimension):
		return fmt.Errorf("entry %s: unknown dimension %q (want one of %s)", e.ID, e.Dimension, strings.Join(Dimensions, ", "))
	case strings.TrimSpace(e.Text) == "":
		return fmt.Errorf("entry %s: empty text", e.ID)
	case len(e.Evidence) == 0:
		return fmt.Errorf("entry %s: no evidence", e.ID)
	case e.Count != len(e.Sessions):
		return fmt.Errorf("entry %s: count %d but %d sessions", e.ID, e.Count, len(e.Sessions))
	case e.State != Candidate && e.State != Confirmed:
		return fmt.Errorf("entry %s: state %q is neither %q nor %q", e.ID, e.State, Candidate, Confirmed)
	case e.State == Confirmed && e.ConfirmedBy != ByUser && e.ConfirmedBy != ByReinforcement:
		return fmt.Errorf("entry %s: confirmed by %q, neither %q nor %q", e.ID, e.ConfirmedBy, ByUser, ByReinforcement)
	case e.State == Confirmed && e.Danger() != "" && e.ConfirmedBy != ByUser:
		return fmt.Errorf("entry %s: flagged dangerous (%s) but not confirmed by the user", e.ID, e.Danger())
	}
	return nil
}

// NewID derives a short, stable entry id from where the entry was first
// learned. IDs do not change when an entry's text is later refined.
func NewID(scope, project, dimension, text string) string {
	h := sha256.Sum256([]byte(scope + "\x00" + project + "\x00" + dimension + "\x00" + text))
	return hex.EncodeToString(h[:5])
}

// Ingested records that a session was merged into the profile. The ledger
// is permanent (not capped), so a session is never merged twice.
type Ingested struct {
	Project      string    `json:"project,omitempty"`
	At           time.Time `json:"at"`
	Observations int       `json:"observations"`
	// Bytes is how much of the transcript was read. A session whose
	// transcript has grown since (it was resumed) is read again; one that
	// gave no observations is not thereby "done" for good.
	Bytes int64 `json:"bytes"`
}

// Tombstone is a forgotten entry: later observations that match it are not
// learned again.
type Tombstone struct {
	Dimension string    `json:"dimension"`
	Text      string    `json:"text"`
	Scope     string    `json:"scope"`
	Project   string    `json:"project,omitempty"`
	At        time.Time `json:"at"`
	// Why is "forget" or "reject"; empty in profiles written before review.
	Why string `json:"why,omitempty"`
}

// Profile is one version of the whole store.
type Profile struct {
	Version   int                 `json:"version"`
	Saved     time.Time           `json:"saved"`
	Reason    string              `json:"reason,omitempty"`
	Entries   []Entry             `json:"entries"`
	Ingested  map[string]Ingested `json:"ingested,omitempty"`
	Forgotten []Tombstone         `json:"forgotten,omitempty"`
	// Pruned lists the latest candidates merges removed (at most
	// PrunedKeep), for `synaxi status` and review.
	Pruned []Pruned `json:"pruned,omitempty"`
}

// Find returns the entry with id, or nil.
func (p *Profile) Find(id string) *Entry {
	for i := range p.Entries {
		if p.Entries[i].ID == id {
			return &p.Entries[i]
		}
	}
	return nil
}

// ForProject returns the entries that apply in the repository root project
// (global ones and that project's own), excluded ones left out, heaviest
// first; ties keep a stable order by dimension and id. The result is a copy.
func (p *Profile) ForProject(project string) []Entry {
	var out []Entry
	for _, e := range p.Entries {
		if e.Excluded {
			continue
		}
		if e.Scope == ScopeGlobal || (project != "" && e.Project == project) {
			out = append(out, e.clone())
		}
	}
	SortEntries(out)
	return out
}

// SortEntries orders entries heaviest first, then by dimension and id.
func SortEntries(es []Entry) {
	slices.SortStableFunc(es, func(a, b Entry) int {
		switch {
		case a.Weight > b.Weight:
			return -1
		case a.Weight < b.Weight:
			return 1
		}
		if c := strings.Compare(a.Dimension, b.Dimension); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}

// Validate checks every entry and that ids are unique.
func (p *Profile) Validate() error {
	seen := make(map[string]bool, len(p.Entries))
	for i := range p.Entries {
		e := &p.Entries[i]
		if err := e.Validate(); err != nil {
			return err
		}
		if seen[e.ID] {
			return fmt.Errorf("entry id %s appears twice", e.ID)
		}
		seen[e.ID] = true
	}
	return nil
}

func (e Entry) clone() Entry {
	e.Sessions = slices.Clone(e.Sessions)
	e.Projects = slices.Clone(e.Projects)
	e.Evidence = slices.Clone(e.Evidence)
	e.Flags = slices.Clone(e.Flags)
	return e
}
