// Package publish turns synaxi's learned profile into guidance for coding
// agents and publishes it.
//
// # Synthesis
//
// Synthesize reads the entries that apply in one project (global entries
// plus that repository root's own, excluded ones left out) and builds a
// Guidance: guards in ALWAYS / NEVER / BEFORE / WHEN form, a short user
// archetype and the assistant's known weaknesses. Every item cites the
// profile entries it came from and carries their evidence (session, message
// uuid, verbatim quote of a human-typed turn); an item that cites nothing
// real is never produced and, from a model, is rejected (see Check). Guards
// are ordered by weight. A Guidance is bound to the profile version it was
// made from.
//
// The deterministic renderer (Render) is the default. The model renderer
// (guidance.renderer = "model") asks an OpenAI-compatible endpoint to
// rephrase the same items; its answer is used only if Check accepts it,
// otherwise the deterministic text is published and the reason recorded.
//
// # Publication
//
// Publish writes, for the global scope and for every project the profile
// knows, the published narrative under $XDG_DATA_HOME/synaxi/guidance/
// (read by the SessionStart hook through ForSession, which delivers it as
// additional context, bounded by guidance.max_chars, and writes nothing
// into the user's files) and, only for the writers enabled in
// guidance.writers, a managed section between BeginMarker and EndMarker in
// AGENTS.md, .cursor/rules/synaxi.mdc, .github/copilot-instructions.md or
// .gemini/styleguide.md. Bytes outside the markers are never changed.
//
// Every file write is recorded in the journal (guidance/journal.json,
// updated under its sidecar lock by atomic replace): which file, whether
// synaxi created it, the hash of the section it wrote, the separator it
// appended before it, and the profile version. Publish after a rollback
// rewrites or retracts what the new version no longer says; Retract (used
// by `synaxi uninstall`) removes exactly the sections the journal lists and
// the files and directories synaxi created, leaving alone a section the
// user edited since (reported as a conflict).
package publish

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/synaxi/synaxi/learning/store"
)

// Guard kinds: the first word of every guard.
const (
	Always = "ALWAYS"
	Never  = "NEVER"
	Before = "BEFORE"
	When   = "WHEN"
)

// Kinds lists the guard kinds.
var Kinds = []string{Always, Never, Before, When}

// Renderer names.
const (
	Deterministic = "deterministic"
	Model         = "model"
)

// Item is one grounded statement: a guard, an archetype line or a known
// weakness. Cites names the profile entries behind it; Evidence is theirs.
type Item struct {
	Kind     string           `json:"kind,omitempty"` // guards only: ALWAYS, NEVER, BEFORE or WHEN
	Text     string           `json:"text"`
	Cites    []string         `json:"cites"`
	Weight   float64          `json:"weight"`
	Evidence []store.Evidence `json:"evidence"`
}

// Guidance is what synthesis made of one project's entries at one profile
// version.
type Guidance struct {
	ProfileVersion int    `json:"profile_version"`
	Project        string `json:"project,omitempty"` // repository root; empty for global-only
	Renderer       string `json:"renderer"`
	// Rejected says why a model rendering was not used, if one was tried.
	Rejected   string `json:"rejected,omitempty"`
	Archetype  []Item `json:"archetype"`
	Guards     []Item `json:"guards"`
	Weaknesses []Item `json:"weaknesses"`
}

// Empty reports whether there is nothing to publish.
func (g *Guidance) Empty() bool {
	return len(g.Archetype)+len(g.Guards)+len(g.Weaknesses) == 0
}

// Which part of the guidance each dimension feeds.
func part(dimension string) string {
	switch dimension {
	case store.Expertise, store.Values:
		return "archetype"
	case store.AIFailures:
		return "weaknesses"
	default:
		return "guards"
	}
}

// Synthesize builds the deterministic guidance from the entries that apply
// in project (store.Published's result: only confirmed entries, excluded ones gone;
// Synthesize skips any other it is given).
// Entries without evidence are skipped: nothing ungrounded is produced.
// Guards whose rule reads the same are merged, citing every entry.
func Synthesize(version int, project string, entries []store.Entry) *Guidance {
	g := &Guidance{ProfileVersion: version, Project: project, Renderer: Deterministic}
	es := slices.Clone(entries)
	store.SortEntries(es)
	byRule := map[string]int{}
	for _, e := range es {
		if !e.Published() || len(e.Evidence) == 0 || strings.TrimSpace(e.Text) == "" {
			continue
		}
		it := Item{Text: sentence(e.Text), Cites: []string{e.ID}, Weight: e.Weight, Evidence: newestFirst(e.Evidence)}
		switch part(e.Dimension) {
		case "archetype":
			it.Text = archetypeLine(e.Dimension, e.Text)
			g.Archetype = append(g.Archetype, it)
		case "weaknesses":
			g.Weaknesses = append(g.Weaknesses, it)
		default:
			it.Kind, it.Text = guardForm(e.Text)
			if it.Kind == "" {
				// No instruction can be read from it: say it as what
				// the profile knows about the user, not as a rule.
				if t := store.WithI(sentence(e.Text)); strings.ContainsFunc(t, unicode.IsLetter) {
					it.Text = "Preference: " + t
					g.Archetype = append(g.Archetype, it)
				}
				continue
			}
			key := strings.ToLower(it.Text)
			if i, ok := byRule[key]; ok {
				g.Guards[i].Cites = append(g.Guards[i].Cites, e.ID)
				g.Guards[i].Evidence = append(g.Guards[i].Evidence, it.Evidence...)
				continue
			}
			byRule[key] = len(g.Guards)
			g.Guards = append(g.Guards, it)
		}
	}
	return g
}

// newestFirst returns a copy of the evidence, newest first.
// newestFirst is the evidence an item carries, newest first, without the
// assistant's message each quote answered (that is for review only).
func newestFirst(ev []store.Evidence) []store.Evidence {
	out := slices.Clone(ev)
	for i := range out {
		out[i].Answered = ""
	}
	slices.SortStableFunc(out, func(a, b store.Evidence) int { return b.Timestamp.Compare(a.Timestamp) })
	return out
}

func archetypeLine(dimension, text string) string {
	label := "Expertise"
	if dimension == store.Values {
		label = "Values"
	}
	return label + ": " + sentence(text)
}

// sentence trims text, collapses its whitespace and ends it with a period
// unless it already ends in punctuation.
func sentence(text string) string {
	t := strings.Join(strings.Fields(text), " ")
	if t == "" {
		return t
	}
	r, _ := utf8.DecodeLastRuneInString(t)
	if !unicode.IsPunct(r) {
		t += "."
	}
	return t
}

// Words that, leading an entry's text, make it a NEVER rule; the rest of
// the text is the forbidden action.
var neverLeads = []string{"never ", "don't ", "dont ", "do not ", "don’t ", "no more ", "must not ", "should not ", "shouldn't "}

// Words whose gerund object makes a NEVER rule: "stop adding X" → "NEVER add X".
var stopLeads = []string{"stop ", "avoid ", "quit "}

// gerundStems restores the verb of common gerunds whose stem is not simply
// the gerund without "ing".
var gerundStems = map[string]string{
	"using": "use", "writing": "write", "making": "make", "taking": "take", "changing": "change",
	"creating": "create", "deleting": "delete", "removing": "remove", "moving": "move", "saving": "save",
	"updating": "update", "generating": "generate", "including": "include", "overwriting": "overwrite",
	"rewriting": "rewrite", "guessing": "guess", "running": "run", "putting": "put", "getting": "get",
	"setting": "set", "cutting": "cut", "hardcoding": "hardcode", "skipping": "skip", "stopping": "stop",
	"committing": "commit", "shipping": "ship", "dropping": "drop", "mocking": "mock",
}

// guardForm turns an entry's text into a rule that starts with one of the
// four kinds, keeping its words: leading "always"/"never"/"before"/"when"/
// "if" set the kind, a leading negation makes NEVER, a description of the
// user ("prefers X", "we use X", "dislikes X") its instruction, an
// imperative ALWAYS. Text no instruction can be read from gives kind "".
func guardForm(text string) (kind, rule string) {
	t := strings.TrimSpace(strings.TrimRight(strings.Join(strings.Fields(text), " "), ".!;,:"))
	if !strings.ContainsFunc(t, unicode.IsLetter) {
		return "", "" // nothing to say
	}
	kind, body := ruleOf(t)
	if kind == "" || !strings.ContainsFunc(body, unicode.IsLetter) {
		// "stop!" alone, or a description no instruction can be read
		// from: not a guard (Synthesize keeps it as a profile line).
		return "", ""
	}
	return kind, sentence(kind + " " + body)
}

// softeners are leading words that frame a rule without being part of it:
// "please run the tests" is the rule "run the tests".
var softeners = []string{"please ", "pls ", "i think that ", "i think ", "i'd like you to ", "i want you to ",
	"we should ", "you should ", "let's ", "lets ", "from now on, ", "from now on ", "going forward, ",
	"going forward ", "in the future, ", "in the future ",
	// a complaint framing the order: "I told you before, never force push"
	"i told you before, ", "i told you already, ", "i already told you, ", "i told you, ", "i told you ", "i said, ",
	"again, ", "how many times, "}

// ruleOf splits trimmed text into a kind and the rest of the rule.
func ruleOf(t string) (kind, body string) {
	for cut := true; cut; {
		cut = false
		for _, p := range softeners {
			if low := strings.ToLower(t); strings.HasPrefix(low, p) && strings.ContainsFunc(t[len(p):], unicode.IsLetter) {
				t, cut = strings.TrimSpace(t[len(p):]), true
			}
		}
	}
	low := strings.ToLower(t)
	rest := func(n int) string { return strings.TrimSpace(t[n:]) }
	for _, l := range []struct{ lead, kind string }{
		{"always ", Always}, {"before ", Before}, {"when ", When}, {"if ", When}, {"whenever ", When},
	} {
		if strings.HasPrefix(low, l.lead) {
			if l.kind == Always {
				return Always, lowerFirst(rest(len(l.lead)))
			}
			return l.kind, rest(len(l.lead))
		}
	}
	for _, p := range neverLeads {
		if strings.HasPrefix(low, p) {
			return Never, lowerFirst(strings.TrimPrefix(rest(len(p)), "ever "))
		}
	}
	for _, p := range stopLeads {
		if strings.HasPrefix(low, p) {
			obj := rest(len(p))
			verb, tail, _ := strings.Cut(obj, " ")
			if stem, ok := gerund(verb); ok {
				return Never, strings.TrimSpace(stem + " " + tail)
			}
			return Never, lowerFirst(obj)
		}
	}
	if strings.HasPrefix(low, "no, ") || strings.HasPrefix(low, "no ") && len(low) > 3 {
		// "no, use pnpm" is a correction whose rule follows the comma.
		if _, after, ok := strings.Cut(t, ","); ok && strings.ContainsFunc(after, unicode.IsLetter) {
			return ruleOf(strings.TrimSpace(after))
		}
	}
	// "reacts strongly when the assistant runs git push": a reaction
	// observed after an action, said as the situation it applies in.
	if m := reactionRE.FindStringSubmatch(t); m != nil {
		return When, "you " + baseVerb(m[2]) + m[3] + ", the user " + m[1]
	}
	if kind, body := described(t); kind != "" {
		return kind, body
	}
	if imperative(low) {
		return Always, lowerFirst(t)
	}
	return "", ""
}

// described reads an instruction out of a description of the user: "the
// user prefers terse answers" → ALWAYS prefer terse answers, "we use tabs"
// → ALWAYS use tabs, "dislikes mocking the database" → NEVER mock the
// database. Anything else gives kind "": it is not an instruction.
func described(t string) (kind, body string) {
	low := strings.ToLower(t)
	for _, subj := range []string{"the user ", "user ", "they ", "he ", "she ", "i ", "we "} {
		if strings.HasPrefix(low, subj) {
			t = strings.TrimSpace(t[len(subj):])
			break
		}
	}
	verb, obj, _ := strings.Cut(t, " ")
	obj = strings.TrimSpace(obj)
	if obj == "" {
		return "", ""
	}
	switch strings.ToLower(verb) {
	case "prefers", "prefer", "likes", "like", "loves", "love", "favours", "favors", "wants", "want":
		return Always, "prefer " + obj
	case "uses", "use", "follows", "follow", "writes", "write", "runs", "run", "keeps", "keep":
		return Always, baseVerb(strings.ToLower(verb)) + " " + obj
	case "hates", "hate", "dislikes", "dislike", "avoids", "avoid", "rejects", "reject":
		v, rest, _ := strings.Cut(obj, " ")
		if stem, ok := gerund(v); ok {
			return Never, strings.TrimSpace(stem + " " + rest)
		}
		return Never, "use " + obj
	}
	return "", ""
}

// reactionRE reads "<reaction> when the assistant <verb>s <object>".
var reactionRE = regexp.MustCompile(`^(?i)([a-z]+s(?: strongly)?) when the assistant ([a-z]+s)\b(.*)$`)

// baseVerb turns a third-person verb into its base form: runs → run,
// pushes → push, uses → use.
func baseVerb(v string) string {
	for _, suf := range []string{"shes", "ches", "xes", "sses"} {
		if strings.HasSuffix(v, suf) {
			return v[:len(v)-2]
		}
	}
	return strings.TrimSuffix(v, "s")
}

// gerund returns the verb of an -ing word.
func gerund(w string) (string, bool) {
	lw := strings.ToLower(w)
	if s, ok := gerundStems[lw]; ok {
		return s, true
	}
	if len(lw) > 5 && strings.HasSuffix(lw, "ing") {
		return lw[:len(lw)-3], true
	}
	return "", false
}

// imperative reports whether text reads as an instruction rather than a
// description of the user ("the user prefers…", "prefers…", "is…").
func imperative(low string) bool {
	// A noun phrase opening the text ("the Dockerfile should live at the
	// root", "we say impediment") states a convention: it is kept in the
	// person's words as a preference, never forced into "ALWAYS the …".
	for _, p := range []string{"the user", "user ", "they ", "he ", "she ", "i ", "i'm ", "prefers ", "likes ", "wants ", "is ", "uses ", "expects ", "values ",
		"the ", "a ", "an ", "our ", "my ", "we ", "these ", "those ", "this ", "that ", "all ", "each ", "every ", "it ", "its ", "there "} {
		if strings.HasPrefix(low, p) {
			return false
		}
	}
	return true
}

func lowerFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	// Keep acronyms and names ("API", "Go") as they are.
	if n < len(s) {
		r2, _ := utf8.DecodeRuneInString(s[n:])
		if unicode.IsUpper(r2) {
			return s
		}
	}
	return string(unicode.ToLower(r)) + s[n:]
}
