// Package review is the fifth stage of synaxi's learning loop: the user
// decides about what was learned before any of it reaches a coding agent.
// It lists the candidates with their evidence (each quote beside the
// assistant message it answered), records a decision (accept, in the
// user's own words or as a global rule, or reject); it also words the
// one-line SessionStart notice that candidates are waiting. It imports no
// later stage: the adapters that take a decision (cli, mcptool) publish
// after it.
//
// Invariants:
//   - A decision is one new profile version (store.Decide), so history and
//     rollback cover it; its publication runs after it, outside the
//     store's lock, and a failed publication never undoes the decision.
//   - A candidate flagged dangerous is listed first with its reason; the
//     MCP side (an agent acting for the user) may not accept it: only the
//     user, in the terminal, can (see Decide's byAgent).
//   - The notice never carries a candidate's text, appears at most once a
//     calendar day per project (state file notice.json, locked
//     read-modify-write and atomic replace), and says nothing when no
//     candidate waits.
//   - Listing candidates marks them shown (store.MarkShown, in place): only
//     a candidate the user could see may ever be pruned.
package review

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/synaxi/synaxi/learning/store"
)

// Quote is one piece of a candidate's evidence as review shows it.
type Quote struct {
	Quote string `json:"quote"`
	// Answered is the assistant's message the user was answering.
	Answered string    `json:"answered,omitempty"`
	Context  string    `json:"context,omitempty"` // what the assistant had just done
	Session  string    `json:"session"`
	Message  string    `json:"message"`
	At       time.Time `json:"at"`
	Project  string    `json:"project,omitempty"`
}

// Item is one candidate waiting for the user.
type Item struct {
	ID        string `json:"id"`
	Scope     string `json:"scope"`
	Project   string `json:"project,omitempty"`
	Dimension string `json:"dimension"`
	Text      string `json:"text"`
	// Rule is Text as a sentence a person would write: capital first
	// letter, "I" for "i", a full stop. Review shows it.
	Rule     string  `json:"rule"`
	Weight   float64 `json:"weight"`
	Sessions int     `json:"sessions"`
	// Danger is the gate's warning: why this rule may harm (empty: none).
	Danger string  `json:"danger,omitempty"`
	Quotes []Quote `json:"quotes"`
	// AlsoIn names other projects with the same rule, a reason to make it
	// global.
	AlsoIn []string `json:"also_in,omitempty"`
	// Conflicts is the accepted rule this candidate says the opposite of;
	// accepting the candidate leaves that rule as it is.
	Conflicts *Rule `json:"conflicts,omitempty"`
}

// Rule names an entry by id and text.
type Rule struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

// List is what `synaxi profile review --json` prints.
type List struct {
	ProfileVersion int    `json:"profile_version"`
	Project        string `json:"project,omitempty"` // "" lists every project's
	Candidates     []Item `json:"candidates"`
	// Pruned are the latest candidates merges removed (faded, or over the
	// cap, after the user had seen them), newest last.
	Pruned []store.Pruned `json:"pruned,omitempty"`
}

// Load lists the candidates that apply in project (its own and global
// ones), or every candidate when project is "": flagged ones first, then
// the heaviest, grouped by project. Listing them is showing them to the user: each is marked
// shown (store.MarkShown), and only from then on may a merge prune it.
func Load(s *store.Store, project string) (*List, error) {
	p, err := s.Load()
	if err != nil {
		return nil, err
	}
	l := &List{ProfileVersion: p.Version, Project: project, Candidates: []Item{}, Pruned: p.Pruned}
	var ids []string
	for _, e := range p.Candidates(project) {
		ids = append(ids, e.ID)
		it := Item{ID: e.ID, Scope: e.Scope, Project: e.Project, Dimension: e.Dimension, Text: e.Text, Rule: store.Sentence(e.Text),
			Weight: e.Weight, Sessions: e.Count, Danger: e.Danger()}
		if c := p.Find(e.Conflicts); c != nil {
			it.Conflicts = &Rule{ID: c.ID, Text: c.Text}
		}
		for i := len(e.Evidence) - 1; i >= 0; i-- { // newest first
			ev := e.Evidence[i]
			it.Quotes = append(it.Quotes, Quote{Quote: ev.Quote, Answered: ev.Answered, Context: ev.Context,
				Session: ev.Session, Message: ev.UUID, At: ev.Timestamp, Project: ev.Project})
		}
		for _, o := range p.Entries {
			if o.ID != e.ID && o.Scope == store.ScopeProject && o.Project != e.Project && o.Dimension == e.Dimension &&
				!slices.Contains(it.AlsoIn, o.Project) && store.Similarity(o.Text, e.Text) >= store.MatchAt {
				it.AlsoIn = append(it.AlsoIn, o.Project)
			}
		}
		slices.Sort(it.AlsoIn)
		l.Candidates = append(l.Candidates, it)
	}
	// Grouped under their project (global ones first), flagged ones
	// still before the rest.
	slices.SortStableFunc(l.Candidates, func(a, b Item) int {
		if da, db := a.Danger != "", b.Danger != ""; da != db {
			if da {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Project, b.Project)
	})
	if err := s.MarkShown(ids); err != nil {
		return nil, err
	}
	return l, nil
}

// ErrNeedsUser refuses an agent's acceptance of a flagged candidate.
var ErrNeedsUser = errors.New("flagged dangerous: only the user can accept it, in the terminal with `synaxi profile review`")

// Decide records d about the entry id in s as a new profile version.
// byAgent is true when an agent decides for the user (the MCP tools): it
// may not accept a candidate flagged dangerous. Publishing the result is
// the caller's (an adapter: cli, mcptool), after the decision stands.
func Decide(s *store.Store, id string, d store.Decision, byAgent bool) (int, error) {
	if byAgent && d.Verdict == store.Accept {
		p, err := s.Load()
		if err != nil {
			return 0, err
		}
		if en := p.Find(id); en != nil && en.Danger() != "" && !(en.State == store.Confirmed && en.ConfirmedBy == store.ByUser) {
			return 0, fmt.Errorf("entry %s: %w (%s)", id, ErrNeedsUser, en.Danger())
		}
	}
	return s.Decide(id, d)
}
