package extract

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/synaxi/synaxi/learning/read"

	"github.com/synaxi/synaxi/learning/store"
)

// Extractor proposes observations for a session. Whatever it returns is
// still checked by Validate before anything is stored.
type Extractor interface {
	Name() string
	Extract(ctx context.Context, d *read.Doc, known []store.Entry) ([]store.Observation, error)
}

// Embedded is the default extractor: rules over the sentences the person
// typed (Turn.Typed: never pasted text, never another agent's message), no
// network, deterministic. It learns only what reads as durable, so that a
// one-off order about the task at hand never comes back as a rule in the
// next session. The structure rules (structure.go), the same in English,
// German, French and Spanish:
//   - a standing order: a time word (always, never, from now on, in
//     future, every time; immer, ab jetzt, in Zukunft; toujours,
//     désormais; siempre, a partir de ahora) together with a directive (an
//     imperative, "make sure", a modal addressed to the assistant) or the
//     person's own habit ("we always use…"), never a description ("it
//     always crashes");
//   - a conditional preference: a condition on the person ("when I…",
//     "wenn ich…") with a consequence (an arrow, "then", an order);
//   - a contrast: "you use A but should use B", "use A, not B";
//   - how the person runs their project: "X is how I launch it";
//   - a demand on every future artefact: "every report must…";
//   - "check it yourself": the assistant should verify its own work;
//   - "make sure … does not …": a protective constraint.
//
// Beside them: prohibitions of a habit ("stop adding…", "keine
// Kommentare…"), a "no" with a prohibition right after an action, stated
// preferences and conventions ("I prefer…", "we use…"), "keep going
// until…" (autonomy), self-descriptions of expertise, complaints about the
// assistant repeating a failure, and repeated tool failures followed by the
// user stepping in. It learns nothing from questions (a polite request
// "can you … yourself?" is an order), hedges and hypotheses, menu answers,
// greetings, or sentences marked as temporary ("for now", "this time").
// labelled_test.go measures it on the shared labelled set; testdata's
// sets measure it on more sentences (docs/ingest.md, "Extraction
// quality").
type Embedded struct{}

// Name is "embedded".
func (Embedded) Name() string { return "embedded" }

// Extract returns one observation per recognised sentence.
func (Embedded) Extract(_ context.Context, d *read.Doc, known []store.Entry) ([]store.Observation, error) {
	var out []store.Observation
	var unread []said // sentences no rule learned from, for repeats
	for i := range d.Turns {
		t := &d.Turns[i]
		ctxText := t.Before.Describe()
		ev := func(quote string) []store.Evidence {
			return []store.Evidence{{Session: d.Session, UUID: t.UUID, Timestamp: t.Timestamp, Quote: quote, Context: ctxText}}
		}
		// Only what the person typed is evidence: never a pasted log,
		// trace, document or the assistant's own words (Split).
		var sentences []string
		for _, p := range t.Typed() {
			sentences = append(sentences, Sentences(p)...)
		}
		found := false
		for si, s := range sentences {
			if o, ok := classify(s, t.Before); ok && (o.Confidence > 0.4 || len(sentences) <= 3) {
				o.Evidence = ev(s)
				if si > 0 && referentRE.MatchString(s) {
					// "I never use that language, …": what "that" is was
					// said just before; the rule carries it.
					o.Text = strings.TrimSpace(sentences[si-1]) + " " + o.Text
				}
				out = append(out, o)
				found = true
			} else if o, ok := repeated(s, d.Session, known); ok {
				o.Evidence = ev(s)
				out = append(out, o)
			} else {
				unread = append(unread, said{turn: i, s: s, ev: ev(s)[0], text: strings.Join(t.Typed(), "\n"), short: len(sentences) <= 3})
			}
		}
		// The assistant kept failing with the same tool and the user had
		// to step in: a weakness of the assistant, evidenced by a sentence
		// of the turn that says so (not whatever the user typed next).
		if t.Before.Failures >= 3 && t.Before.FailingTool != "" {
			if i := slices.IndexFunc(sentences, func(s string) bool { return saysItFails(s, t.Before.FailingTool) }); i >= 0 {
				out = append(out, store.Observation{
					Dimension:  store.AIFailures,
					Text:       fmt.Sprintf("kept retrying failing %s calls instead of stopping to rethink", t.Before.FailingTool),
					Confidence: 0.6, Evidence: ev(sentences[i]),
				})
			}
		}
		// A strong reaction right after an action is a trigger.
		if found && strongReaction(t.Text) && len(t.Before.Tools) > 0 && len(sentences) > 0 {
			out = append(out, store.Observation{
				Dimension:  store.Triggers,
				Text:       "reacts strongly when the assistant " + coarse(t.Before.Tools[len(t.Before.Tools)-1]),
				Confidence: 0.5, Evidence: ev(sentences[0]),
			})
		}
	}
	return append(out, repeatedInSession(unread)...), nil
}

// said is one typed sentence and where it was said.
type said struct {
	turn  int
	s     string
	ev    store.Evidence
	text  string // what the turn typed
	short bool   // the turn says at most three sentences
}

// repeatedInSession learns an instruction the person typed in two or more
// turns of one session ("make the changes and I will read the diffs",
// four times): said once it may be about the task, said again it is how
// they work. Only sentences of four words or more that are no question,
// hedge, suggestion or one-off order count, and only when they read as an
// instruction (an imperative, a directive, "I will …") in a short turn
// (three sentences at most: not a line of a pasted log that repeats), in
// turns whose texts differ (a rewound session holds the same turn twice);
// matched by their content words (store.MatchAt). The evidence is every
// turn that said it.
func repeatedInSession(sentences []said) []store.Observation {
	var out []store.Observation
	used := make([]bool, len(sentences))
	for i, a := range sentences {
		if used[i] || !a.short || len(strings.Fields(a.s)) < 4 || !instruction(a.s) ||
			isQuestion(a.s) || hedgeRE.MatchString(a.s) || oneOff(a.s) || suggestRE.MatchString(a.s) {
			continue
		}
		o := store.Observation{Dimension: store.Workflow, Text: ruleText(a.s), Confidence: 0.5,
			Evidence: []store.Evidence{a.ev}}
		for j := i + 1; j < len(sentences); j++ {
			b := sentences[j]
			if used[j] || !b.short || b.turn == a.turn || b.text == a.text || slices.ContainsFunc(o.Evidence, func(e store.Evidence) bool { return e.UUID == b.ev.UUID }) {
				continue
			}
			if store.Similarity(a.s, b.s) >= store.MatchAt {
				o.Evidence = append(o.Evidence, b.ev)
				used[j] = true
			}
		}
		if len(o.Evidence) >= 2 {
			out = append(out, o)
		}
	}
	return out
}

// willRE: the person says what they will do, dividing the work: "I will
// read the diffs", "ich lese …", "je relirai …", "yo reviso …".
var willRE = lazy(`(?i)\b(?:i(?:'ll| will| am going to)|ich (?:werde|lese|prüfe|schaue|mache)|je (?:vais|relirai|lirai|vérifierai)|yo (?:leo|reviso|haré|voy a))\b`)

// instruction reports whether s tells the assistant what to do or how the
// work is divided.
func instruction(s string) bool {
	lead := strings.TrimLeft(leadRE.ReplaceAllString(strings.ToLower(s), ""), " ,")
	return imperativeStartRE.MatchString(lead) || willRE.MatchString(s) || directiveRE.MatchString(s) && !subjectRE.MatchString(lead)
}

// failureTalkRE: a sentence about the assistant failing over and over
// or being stuck: "stop retrying", "you keep failing", "it fails again",
// "hör auf", "schon wieder", "arrête", "encore", "para", "otra vez".
var failureTalkRE = lazy(`(?i)\b(?:stop|stuck|loop\pL*|retry\pL*|again|keep|kept|same|fail\pL*|broken|hör auf|wieder|schleife|arrête|encore|boucle|échou\pL*|para|otra vez|bucle|fall\pL*)\b`)

// saysItFails reports whether s is about the failing tool calls.
func saysItFails(s, tool string) bool {
	return failureTalkRE.MatchString(s) || strings.Contains(strings.ToLower(s), strings.ToLower(tool))
}

// Sentences splits a turn into trimmed sentences of at most 400 bytes
// (longer ones are dropped: a pasted log is not a preference).
func Sentences(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		start := 0
		for i := 0; i < len(line); i++ {
			c := line[i]
			if (c == '.' || c == '!' || c == '?' || c == ';') && (i+1 == len(line) || line[i+1] == ' ') {
				out = appendSentence(out, line[start:i+1])
				start = i + 1
			}
		}
		out = appendSentence(out, line[start:])
	}
	return out
}

func appendSentence(out []string, s string) []string {
	s = strings.TrimSpace(s)
	if len(s) < 3 || len(s) > 400 || !strings.ContainsFunc(s, unicode.IsLetter) {
		return out
	}
	return append(out, s)
}

var (
	// A prohibition leading the sentence ("don't", "stop", "avoid"): a rule
	// only when it forbids a habit, not one step of the task.
	prohibitRE = lazy(`(?i)^(please |pls |and |bitte |s'il te plaît,? |por favor,? )?(don'?t|do not|stop|avoid|quit|no more|hör auf|arrête|deja de|keine|kein|plus de|pas de|nada de|ningún|ninguna)\b\s*(.*)$`)
	// Openers that forbid a kind of thing ("keine Kommentare …", "pas de
	// mocks …"): a prohibition of a habit whatever follows.
	kindNoRE = lazy(`(?i)^(please |pls |and |bitte |s'il te plaît,? |por favor,? )?(no more|keine|kein|plus de|pas de|nada de|ningún|ninguna)\b`)
	// Words that make a prohibition general: "… every function", "… again".
	generalRE = lazy(`(?i)\b(every|each|any|all|anything|anyone|ever|again|whenever)\b`)
	// Words that make a sentence about this moment only.
	oneOffRE = lazy(`(?i)\b(for now|this time|just this once|yet|right now|at the moment|for the moment|today|` +
		`(?:for|in|on) this (?:one|task|pr|file|commit|ticket|issue|page|screen|feature|story|branch|change)|` +
		`erstmal|vorerst|diesmal|(?:für|in|auf) (?:diese[nrms]?|dieses) (?:aufgabe|ticket|seite|datei|pr|feature|branch)|` +
		`pour l'instant|cette fois|(?:pour|dans|sur) (?:cette|ce|cet) (?:page|tâche|ticket|fichier|écran|pr|branche)|` +
		`por ahora|esta vez|(?:en|para) (?:esta|este) (?:pantalla|página|tarea|ticket|archivo|pr|rama))\b` +
		// a time word made an adjective: "always-on", "immer-aktiv"
		`|\b(?:always|never|immer|toujours|siempre)-\pL`)
	// An edit of the thing in hand in the same sentence: "…, add it to
	// the header", "bau das ein", "ajoute-le", "añádelo"; unless the
	// sentence is about every time something happens ("every time you add
	// an endpoint, add it to the OpenAPI file").
	editItRE = lazy(`(?i)\b(?:add|put|insert|place|build) (?:it|this|that|them)\b|\bbau(?:e)? (?:das|es|ihn|sie)\b|\bfüge? (?:das|es|ihn|sie)\b|\b(?:ajoute|mets|place|insère)-(?:le|la|les)\b|\b(?:añáde|pon|coloca|inserta)(?:lo|la|los|las)\b`)
	eventRE  = lazy(`(?i)\b(?:every ?time|each time|whenever|when you|if you|jedes ?mal|immer wenn|wenn du|sobald du|chaque fois|quand tu|si tu|cada vez|siempre que|cuando)\b`)
	// "Now" opening the sentence, after a thanks or an ok: the next step
	// of the task in hand ("thanks now i want you to add …").
	nowRE = lazy(`(?i)^(?:(?:thanks|thank you|thx|ok|okay|great|good|perfect|nice|danke|gut|super|merci|parfait|bien|gracias|vale|perfecto)[,.!]?\s+)?(?:and\s+|und\s+|et\s+|y\s+)?(?:now|jetzt|maintenant|ahora)\b(?:\s+(?:on|an)\b)?`)
	// A stated preference or convention.
	preferRE = lazy(`(?i)\b(i (really )?(prefer|'?d prefer|'?d rather|like|love|hate|dislike|don'?t like|can'?t stand)|we (use|prefer|don'?t use|never use|always use)|our (convention|style|standard|rule)s? (is|are)|convention is|instead of|rather than|ich (bevorzuge|mag keine|hasse)|wir (verwenden|benutzen|nutzen)|je (préfère|déteste|n'aime pas)|(nous|on) utilise|prefiero|odio|usamos)\b`)
	// Autonomy: keep going until done, without asking.
	autonomyRE = lazy(`(?i)^(continue|keep going|carry on|proceed|don'?t stop)\b.*\b(until|without)\b`)
	// The user complains that the assistant repeats a failure.
	repeatRE = lazy(`(?i)(\byou (forgot|keep|ignored|again|didn'?t (listen|read))\b|\bi (already )?(told you|said|asked you)\b|\bhow many times\b|\bagain[,:!]|\bwie oft\b|\bje t'ai (dit|déjà dit)\b|\bya te (dije|lo dije)\b)`)
	// A suggestion about the task at hand ("I think we should investigate
	// X before Y"), unless a time-free marker makes it a rule.
	suggestRE = lazy(`(?i)\b(we should|we could|let'?s|i think|sollten wir|on devrait|deberíamos)\b`)
	expertRE  = lazy(`(?i)\b(i'?m|i am) (a |an )?(senior |junior |staff |principal |lead )?([a-z+#-]+ )?(developer|engineer|programmer|architect|admin|sre|scientist)\b|\bi'?ve been (using|writing|working with)\b|\b(i'?m|i am) new to\b|\bi'?m not familiar with\b`)
	leadRE    = lazy(`(?i)^(no+|nope|nah|nein|non)[,.!:]?\s+`)
	// A question mark at the end, whatever stray backslash or space
	// follows it (a line continuation typed by habit).
	questionRE = lazy(`[?？][\s\\]*$`)
	// Hedges and hypotheses about the problem at hand: not facts, not rules.
	hedgeRE = lazy(`(?i)\b(maybe|perhaps|probably|might be|could be|i wonder|not sure|i guess|i suspect|possibly|vielleicht|peut-être|quizás|tal vez)\b`)
)

// keyword sets that route an observation to a dimension.
var (
	codeStyleRE = lazy(`(?i)\b(indent\w*|tabs?|spaces|naming|names|camel ?case|snake_case|type hints?|comments?|docstrings?|variables?|functions?|error handling|early returns?|imports?|semicolons?|quotes|gofmt|prettier|black|eslint|style|idiomatic|readab\w+|helpers?|abstractions?|funktion\w*|kommentar\w*|variabl\w+|fonctions?|commentaires?|funci\w+|comentarios?|nombres)\b`)
	commsRE     = lazy(`(?i)\b(concise|brief|short(er)?|too long|verbose|explain\w*|summar\w+|emojis?|tone|answers?|respond\w*|reply|replies|language|in (english|german|french|spanish)|just the code|wordy|chatty|antwort\w*|deutsch|englisch|réponses?|français|anglais|respuestas?|español|inglés)\b`)
	workflowRE  = lazy(`(?i)\b(commits?|committ\w*|push\w*|pull requests?|prs?|branch\w*|merge\w*|rebase|tests?|testing|ci|deploy\w*|release\w*|pre-commit|gitleaks|sign\w*|gpg|reviews?|builds?|lint\w*|npm|pnpm|yarn|docker|migrations?|investigate|plan\w*|worktrees?)\b`)
	valuesRE    = lazy(`(?i)\b(i care about|important to me|i value|security|privacy|simplicity|correctness|quality|performance matters)\b`)
)

// classify recognises one sentence typed after the assistant did before.
func classify(s string, before read.Action) (store.Observation, bool) {
	lower := strings.ToLower(s)
	durable := standingOrder(s)
	if isQuestion(s) || hedgeRE.MatchString(s) || oneOff(s) || !durable && suggestRE.MatchString(s) {
		// A question, a hypothesis or an order for this moment is not a
		// fact about the user.
		return store.Observation{}, false
	}
	if o, ok := structural(s, before); ok {
		return o, true
	}
	text := ruleText(s)
	words := len(strings.Fields(s))
	switch {
	case prohibitsHabit(text) && words >= 3:
		return store.Observation{Dimension: store.Guards, Text: text, Confidence: 0.6}, true
	case rejectsAction(lower, text, before) && words >= 4:
		// "no, don't mock the database in the tests" right after the
		// assistant did it: a correction of how it works, the issue's
		// first example of what the user teaches.
		return store.Observation{Dimension: store.Guards, Text: text, Confidence: 0.5}, true
	case expertRE.MatchString(s):
		return store.Observation{Dimension: store.Expertise, Text: text, Confidence: 0.6}, true
	case autonomyRE.MatchString(s):
		return store.Observation{Dimension: store.Expectations, Text: text, Confidence: 0.5}, true
	case preferRE.MatchString(s):
		return store.Observation{Dimension: route(s), Text: text, Confidence: 0.6}, true
	case repeatRE.MatchString(s) && addressedRE.MatchString(s) && words >= 3:
		if ordersRE.MatchString(s) {
			// "I told you: never force push" is an order, a guard, not
			// only a weakness of the assistant.
			return store.Observation{Dimension: store.Guards, Text: text, Confidence: 0.6}, true
		}
		return store.Observation{Dimension: store.AIFailures, Text: text, Confidence: 0.6}, true
	}
	return store.Observation{}, false
}

// referentRE: a demonstrative that points back at what was said just
// before ("that language", "this one", "diese Variante", "ce mot", "esa
// palabra").
var referentRE = lazy(`(?i)\b(?:that|this|these|those)\s+(?:\pL+\s+)?(?:one|ones|word|words|language|term|terms|way|style|name|names|approach|pattern|thing|things|phrase|kind)\b|\b(?:diese[rsnm]?|dieses|das da)\s+\pL+|\b(?:ce|cet|cette|ces)\s+(?:mot|mots|terme|façon|style|langage|nom|genre)\b|\b(?:ese|esa|esos|esas|este|esta)\s+(?:palabra|palabras|término|forma|estilo|lenguaje|nombre|tipo)\b`)

// ordersRE: the sentence carries an order, whatever else it says.
var ordersRE = lazy(`(?i)\b(?:never|don'?t|do not|always|nie|niemals|immer|jamais|toujours|nunca|siempre)\s+\pL+`)

// ruleText is the rule an observation states, in the person's words and
// case: the sentence without a leading "no," and its final stop.
func ruleText(s string) string {
	t := strings.TrimRight(strings.TrimSpace(leadRE.ReplaceAllString(s, "")), ".!; ")
	if t == "" {
		return strings.TrimSpace(s)
	}
	return t
}

// oneOff reports whether s is about this moment or the thing in hand
// only: "for now", "for this ticket", "add it to the header", "thanks,
// now add …" (but not "now on" or "from now on").
func oneOff(s string) bool {
	if m := nowRE.FindStringSubmatch(s); m != nil && !strings.HasSuffix(strings.ToLower(m[0]), " on") && !strings.HasSuffix(strings.ToLower(m[0]), " an") {
		return true
	}
	return oneOffRE.MatchString(s) || editItRE.MatchString(s) && !eventRE.MatchString(s)
}

// addressedRE: a complaint about the assistant names it or what it was
// told: "you forgot…", "I told you…", "du hast…", "je t'ai dit…". "Again,
// more info later" complains about nothing.
var addressedRE = lazy(`(?i)\b(?:you|your|du|dir|dich|tu|toi|t'|vous|tú|te|usted)\b|\bi (?:already )?(?:told|said|asked)\b|\bhow many times\b|\bwie oft\b`)

// repeated recognises a sentence that says again what an entry learned in
// another session says (the same content words, store.MatchAt or more,
// against its text or one of its quotes): a statement the user repeats
// across sessions is durable even without a marker, so it reinforces that
// entry. Questions, hedges and temporary orders still teach nothing.
func repeated(s, session string, known []store.Entry) (store.Observation, bool) {
	if isQuestion(s) || hedgeRE.MatchString(s) || oneOff(s) || len(strings.Fields(s)) < 3 {
		return store.Observation{}, false
	}
	for _, e := range known {
		if e.Excluded || e.Dimension == store.AIFailures || e.Dimension == store.Triggers || !slices.ContainsFunc(e.Evidence, func(ev store.Evidence) bool { return ev.Session != session }) {
			continue
		}
		match := store.Similarity(s, e.Text) >= store.MatchAt
		for _, ev := range e.Evidence {
			match = match || ev.Session != session && store.Similarity(s, ev.Quote) >= store.MatchAt
		}
		if match {
			return store.Observation{Dimension: e.Dimension, Text: e.Text, Confidence: 0.5}, true
		}
	}
	return store.Observation{}, false
}

// prohibitsHabit reports whether text opens with a prohibition of a habit:
// "stop explaining every change", "don't add comments to every function",
// "avoid adding dependencies", but not "stop the server" or "don't touch
// that file".
func prohibitsHabit(text string) bool {
	m := prohibitRE.FindStringSubmatch(text)
	if m == nil {
		return false
	}
	verb, _, _ := strings.Cut(m[3], " ")
	return kindNoRE.MatchString(text) || generalRE.MatchString(m[3]) || len(verb) > 5 && strings.HasSuffix(verb, "ing")
}

// rejectsAction reports whether a sentence rejects what the assistant had
// just done: it opens with a "no" and goes on with a prohibition ("no,
// don't …", "nope, stop …"), and the assistant did act in the turn before.
// A bare "don't touch that file" without the "no" stays an order for the
// task at hand.
func rejectsAction(lower, text string, a read.Action) bool {
	return leadRE.MatchString(lower) && prohibitRE.MatchString(text) && (len(a.Tools) > 0 || a.Words > 0)
}

// route picks the dimension of a preference by its vocabulary.
func route(s string) string {
	switch {
	case codeStyleRE.MatchString(s):
		return store.CodeStyle
	case commsRE.MatchString(s):
		return store.Communication
	case valuesRE.MatchString(s):
		return store.Values
	case workflowRE.MatchString(s):
		return store.Workflow
	}
	return store.Expectations
}

var shoutRE = lazy(`\b(NO|STOP|WRONG|NEVER|WTF|DON'T)\b|!!`)

func strongReaction(s string) bool { return shoutRE.MatchString(s) }

// coarse turns "ran git push origin" into "runs git push" so the same kind
// of action matches across sessions.
func coarse(tool string) string {
	f := strings.Fields(tool)
	if len(f) == 0 {
		return tool
	}
	switch f[0] {
	case "ran":
		if len(f) >= 3 {
			return "runs " + f[1] + " " + f[2]
		}
		return "runs commands"
	case "edited":
		return "edits files"
	case "wrote":
		return "writes files"
	}
	return "uses " + f[0]
}

// lazy is read.Lazy: rules compile on first use.
var lazy = read.Lazy
