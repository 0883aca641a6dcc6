package store

import (
	"math"
	"slices"
	"time"
)

// Decay and pruning tuning. Only candidates decay: a confirmed entry stays
// until the user changes it (a rule the agent obeys is never repeated, so
// anything that expired by disuse would expire because it works).
const (
	// DecaySessions: a candidate's weight halves for every DecaySessions
	// sessions of its project (any project, for a global candidate) that
	// ended after it was last seen. Calendar time plays no part: a project
	// left alone for a year keeps its candidates.
	DecaySessions = 20
	// MinWeight: a candidate lighter than this may be pruned, once the
	// user has seen it.
	MinWeight = 0.1
	// MaxPerGroup: candidates kept per dimension and scope/project; the
	// lightest seen ones beyond it are pruned.
	MaxPerGroup = 40
	// PrunedKeep: how many prune records Profile.Pruned keeps, newest last.
	PrunedKeep = 50
)

// Pruned records one candidate a merge removed, for `synaxi status` and
// review.
type Pruned struct {
	ID        string    `json:"id"`
	Dimension string    `json:"dimension"`
	Text      string    `json:"text"`
	Project   string    `json:"project,omitempty"`
	At        time.Time `json:"at"`  // wall-clock time of the prune
	Why       string    `json:"why"` // "faded" or "over the cap"
}

// support adds one more session's confidence conf to e's support. The
// weight is 1 − (1 − peak)·Π(1 − 0.4·c) over the other sessions' c: the
// strongest session counts whole, every other one closes a share of the
// gap to 1. Keeping the peak apart makes it the same in any merge order.
func (e *Entry) support(conf float64) {
	if e.Rest == 0 {
		e.Rest = 1
	}
	if conf > e.Peak {
		conf, e.Peak = e.Peak, conf
	}
	e.Rest *= 1 - 0.4*conf
}

// retext gives an unseen candidate the wording of its earliest session
// (and the id that wording gives), so a back-fill that reads an older
// session later ends where reading it first would have. Nothing the user
// has seen, accepted or edited is renamed.
func (e *Entry) retext(p *Profile, text string) {
	if e.State != Candidate || !e.ShownAt.IsZero() || e.Text == text {
		return
	}
	e.Text = text
	e.ID = "" // not a clash with itself
	e.ID = freeID(p, e.Scope, e.Project, e.Dimension, text)
}

// freeID is NewID made unique among p's entries.
func freeID(p *Profile, scope, project, dimension, text string) string {
	id := NewID(scope, project, dimension, text)
	for p.Find(id) != nil {
		id = NewID(scope, project, dimension, id)
	}
	return id
}

// contradicted returns the id of an entry the user accepted that o says the
// opposite of ("use tabs" against the accepted "never use tabs"), in any
// dimension, applying in project; "" if none.
func contradicted(p *Profile, o Observation, project string) string {
	for _, e := range p.Entries {
		if e.State != Confirmed || e.ConfirmedBy != ByUser || (e.Scope == ScopeProject && e.Project != project) {
			continue
		}
		if d, sameSense := overlap(e.Text, o.Text); !sameSense && d >= MatchAt {
			return e.ID
		}
	}
	return ""
}

// reweigh sets every entry's weight from its support and, for a candidate,
// its decay: 0.5^(later/DecaySessions), later being the sessions in the
// ledger of the candidate's project (of any project for a global one)
// that ended after its last sighting. Both are functions of the set of
// merged sessions, never of their order.
func reweigh(p *Profile) {
	ends := sessionEnds(p)
	for i := range p.Entries {
		e := &p.Entries[i]
		if e.Peak == 0 && e.Rest == 0 {
			// Written before support was kept: its weight is its support.
			e.Peak, e.Rest = e.Weight, 1
		}
		w := 1 - (1-e.Peak)*e.Rest
		if e.State == Candidate {
			w *= math.Pow(0.5, float64(after(ends, e))/DecaySessions)
		}
		e.Weight = math.Round(w*1e9) / 1e9
	}
}

// sessionEnds are the ledger's session end times, sorted, per project and
// (under "") all of them.
func sessionEnds(p *Profile) map[string][]time.Time {
	ends := map[string][]time.Time{}
	for _, in := range p.Ingested {
		ends[""] = append(ends[""], in.At)
		if in.Project != "" {
			ends[in.Project] = append(ends[in.Project], in.At)
		}
	}
	for _, ts := range ends {
		slices.SortFunc(ts, time.Time.Compare)
	}
	return ends
}

// after counts the sessions that apply to e and ended after it was last
// seen.
func after(ends map[string][]time.Time, e *Entry) int {
	ts := ends[e.Project] // "" for a global entry: every session
	i, found := slices.BinarySearchFunc(ts, e.LastSeen, time.Time.Compare)
	for found && i < len(ts) && !ts[i].After(e.LastSeen) {
		i++
	}
	return len(ts) - i
}

// prune removes candidates the user has seen (Entry.ShownAt) that faded
// under MinWeight or fall beyond MaxPerGroup of their dimension and
// scope/project, lightest first, and records each in p.Pruned. A
// candidate nobody has seen, and every confirmed entry, stays.
func prune(p *Profile, now time.Time) int {
	SortEntries(p.Entries)
	seen := map[string]int{}
	var gone []Pruned
	p.Entries = slices.DeleteFunc(p.Entries, func(e Entry) bool {
		if e.State != Candidate {
			return false
		}
		k := e.Dimension + "\x00" + e.Scope + "\x00" + e.Project
		seen[k]++
		why := ""
		switch {
		case e.ShownAt.IsZero():
			return false
		case e.Weight < MinWeight:
			why = "faded"
		case seen[k] > MaxPerGroup:
			why = "over the cap"
		default:
			return false
		}
		gone = append(gone, Pruned{ID: e.ID, Dimension: e.Dimension, Text: e.Text, Project: e.Project, At: now, Why: why})
		return true
	})
	p.Pruned = append(p.Pruned, gone...)
	if n := len(p.Pruned); n > PrunedKeep {
		p.Pruned = slices.Delete(p.Pruned, 0, n-PrunedKeep)
	}
	return len(gone)
}

// MarkShown records that the user has been shown the candidates with ids
// (review listed them); only from then on may a merge prune them. It is
// bookkeeping, not a change of what was learned: the current version is
// rewritten in place (profile.json and its history file), so no version
// is added and published guidance stays current. Ids already marked or
// not found are skipped; when nothing changes nothing is written.
func (s *Store) MarkShown(ids []string) error {
	return s.annotate(func(p *Profile) bool {
		changed := false
		for _, id := range ids {
			if e := p.Find(id); e != nil && e.State == Candidate && e.ShownAt.IsZero() {
				e.ShownAt = s.now().UTC()
				changed = true
			}
		}
		return changed
	})
}
