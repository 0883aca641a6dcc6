package store

import (
	"slices"
	"strings"
	"time"
	"unicode"
)

// Merge tuning. Similarity is the word-set Dice coefficient of two texts
// (see Similarity); entries of the same dimension at or above MatchAt are
// the same observation.
const (
	MatchAt = 0.7
	// ReinforceAt is how many distinct sessions must have supplied an
	// entry's evidence before learning.publish = "reinforced" confirms it.
	ReinforceAt = 2
)

// globalDims are about the person, not a codebase: they are stored global
// from the start. The rest are stored per project; only the user moves one
// to the global scope (Store.Decide with Global).
var globalDims = map[string]bool{Expertise: true, Communication: true, Values: true}

// Observation is one extracted, already grounded observation. Every
// Evidence quote has been checked against the session's human-typed turns
// before it gets here.
type Observation struct {
	Dimension  string     `json:"dimension"`
	Text       string     `json:"text"`
	Confidence float64    `json:"confidence"`
	Evidence   []Evidence `json:"evidence"`
	// Flags are what the screen found in the observation (see Flag); an
	// entry gains the flags of every observation merged into it.
	Flags []Flag `json:"flags,omitempty"`
}

// Batch is everything one session contributes.
type Batch struct {
	Session      string
	Project      string    // repository root; "" when unknown (stored global)
	At           time.Time // the session's last timestamp
	Bytes        int64     // transcript size read
	Observations []Observation
	// Reinforced confirms a project candidate once ReinforceAt sessions
	// support it (learning.publish = "reinforced"); see Confirm.
	Reinforced bool
	// Now is the wall-clock time of the merge, recorded with each prune
	// (Profile.Pruned); zero means time.Now().
	Now time.Time
}

// MergeStats says what a merge did. Confirmed counts candidates the merge
// confirmed by reinforcement.
type MergeStats struct {
	Added, Reinforced, Repeated, Forgotten, Confirmed, Pruned int
}

// Merge folds b into p. It is idempotent per session: merging the same
// batch twice changes nothing, because an entry that already lists the
// session gains no count and no weight (a repeated session only adds
// evidence it did not cite yet). Observations matching a tombstone are
// dropped. The result does not depend on the order sessions are merged in
// (a back-fill reads them in any order): an entry's weight, text, id and
// first and last sighting are functions of the set of sessions behind it,
// and a candidate's decay counts the sessions of its project that ended
// after it was last seen (see reweigh). Confirmed entries never decay and
// are never pruned; a candidate is pruned only once the user has seen it
// in review (see prune), and each prune is recorded in Profile.Pruned. A
// new entry is a Candidate; one that contradicts an entry the user
// accepted names it (Entry.Conflicts). With b.Reinforced a project
// candidate that now has evidence from ReinforceAt sessions and no
// dangerous flag is confirmed. Nothing moves to the global scope here:
// that takes the user.
func Merge(p *Profile, b Batch) MergeStats {
	now := b.Now
	if now.IsZero() {
		now = time.Now()
	}
	var st MergeStats
	at := b.At.UTC()
	for _, o := range b.Observations {
		if !ValidDimension(o.Dimension) || strings.TrimSpace(o.Text) == "" || len(o.Evidence) == 0 {
			continue
		}
		if forgotten(p, o, b.Project) {
			st.Forgotten++
			continue
		}
		conf := o.Confidence
		if conf <= 0 || conf > 1 {
			conf = 0.5
		}
		scope, project := ScopeProject, b.Project
		if globalDims[o.Dimension] || project == "" {
			scope, project = ScopeGlobal, ""
		}
		e := best(p, o.Dimension, o.Text, b.Project)
		switch {
		case e == nil:
			ne := Entry{
				ID: freeID(p, scope, project, o.Dimension, o.Text), Scope: scope, Project: project,
				Dimension: o.Dimension, Text: strings.TrimSpace(o.Text), Peak: conf, Rest: 1,
				FirstSeen: at, LastSeen: at, State: Candidate, Conflicts: contradicted(p, o, b.Project),
			}
			p.Entries = append(p.Entries, ne)
			e = &p.Entries[len(p.Entries)-1]
			st.Added++
		case e.HasSession(b.Session):
			st.Repeated++
		default:
			e.support(conf)
			if at.Before(e.FirstSeen) {
				e.FirstSeen = at
				e.retext(p, o.Text)
			}
			st.Reinforced++
		}
		if !e.HasSession(b.Session) {
			e.Sessions = append(e.Sessions, b.Session)
			e.Count = len(e.Sessions)
		}
		if b.Project != "" && !slices.Contains(e.Projects, b.Project) {
			e.Projects = append(e.Projects, b.Project)
		}
		if at.After(e.LastSeen) {
			e.LastSeen = at
		}
		for _, ev := range o.Evidence {
			if ev.Project == "" {
				ev.Project = b.Project
			}
			e.AddEvidence(ev)
		}
		e.addFlags(o.Flags)
		if b.Reinforced && e.confirmByReinforcement(at) {
			st.Confirmed++
		}
	}
	if p.Ingested == nil {
		p.Ingested = map[string]Ingested{}
	}
	prev := p.Ingested[b.Session]
	p.Ingested[b.Session] = Ingested{Project: b.Project, At: at, Bytes: max(prev.Bytes, b.Bytes),
		Observations: max(prev.Observations, len(b.Observations))}
	reweigh(p)
	st.Pruned = prune(p, now.UTC())
	return st
}

// best is the most similar entry of dimension that applies in project
// (global ones and the project's own), or nil below MatchAt.
func best(p *Profile, dimension, text, project string) *Entry {
	var found *Entry
	top := 0.0
	for i := range p.Entries {
		e := &p.Entries[i]
		if e.Dimension != dimension || (e.Scope == ScopeProject && e.Project != project) {
			continue
		}
		if s := Similarity(e.Text, text); s >= MatchAt && s > top {
			found, top = e, s
		}
	}
	return found
}

func forgotten(p *Profile, o Observation, project string) bool {
	for _, t := range p.Forgotten {
		if t.Dimension == o.Dimension && (t.Scope == ScopeGlobal || t.Project == project) &&
			Similarity(t.Text, o.Text) >= MatchAt {
			return true
		}
	}
	return false
}

// negations flip an observation's meaning; two texts that disagree on them
// are never the same observation ("use tabs" / "never use tabs").
var negations = map[string]bool{
	"no": true, "not": true, "never": true, "dont": true, "don't": true, "do not": true,
	"avoid": true, "stop": true, "without": true, "nie": true, "nicht": true, "kein": true,
	"jamais": true, "pas": true, "nunca": true,
}

var stop = map[string]bool{
	"a": true, "an": true, "the": true, "to": true, "of": true, "and": true, "or": true,
	"in": true, "on": true, "for": true, "is": true, "be": true, "it": true, "this": true,
	"that": true, "with": true, "please": true, "you": true, "i": true, "we": true,
	"user": true, "always": true, "should": true, "must": true,
}

// Similarity is the Dice coefficient of the two texts' content-word sets
// (lower case, punctuation and filler removed), or 0 when one is negated
// and the other is not.
func Similarity(a, b string) float64 {
	d, sameSense := overlap(a, b)
	if !sameSense {
		return 0
	}
	return d
}

// overlap is the Dice coefficient of the two texts' content-word sets,
// negations left out, and whether both are negated or neither is.
func overlap(a, b string) (float64, bool) {
	wa, na := words(a)
	wb, nb := words(b)
	return dice(wa, wb), na == nb
}

func dice(wa, wb map[string]bool) float64 {
	if len(wa) == 0 || len(wb) == 0 {
		if len(wa) == len(wb) {
			return 1
		}
		return 0
	}
	common := 0
	for w := range wa {
		if wb[w] {
			common++
		}
	}
	return 2 * float64(common) / float64(len(wa)+len(wb))
}

func words(s string) (map[string]bool, bool) {
	set := map[string]bool{}
	neg := false
	for _, f := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' && r != '_' && r != '.'
	}) {
		f = strings.Trim(f, "'.-")
		if negations[f] || strings.HasSuffix(f, "n't") {
			neg = true
			continue
		}
		if f == "" || stop[f] {
			continue
		}
		set[f] = true
	}
	return set, neg
}
