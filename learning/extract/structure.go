package extract

import (
	"strings"

	"github.com/synaxi/synaxi/learning/read"
	"github.com/synaxi/synaxi/learning/store"
)

// Structure rules: the shapes a durable correction takes in a sentence,
// the same in English, German, French and Spanish, rather than single cue
// words. Each rule needs two parts to agree (a time word and a directive,
// a thing used and a thing wanted, a condition on the person and a
// consequence), so that a word that only sometimes marks a rule ("immer",
// "toujours", "always" in a description) does not make one alone.
//
// Written from the grammar of each language, not from the development
// set's sentences; structure_test.go holds varied sentences per rule and
// language, positive and negative.

// timeWordRE: a time word that makes an order standing.
var timeWordRE = lazy(`(?i)(?:^|[^\pL])(?:always|never|from now on|when in doubt|if in doubt|im zweifel(?:sfall)?|en cas de doute|dans le doute|en caso de duda|ante la duda|going forward|from here on|in (?:the )?future|every ?time|each time|whenever|by default|as a rule|(?:don'?t|do not) ever|` +
	`immer|nie|niemals|ab jetzt|ab sofort|von nun an|künftig|zukünftig|in zukunft|jedes ?mal|grundsätzlich|stets|` +
	`toujours|jamais|désormais|dorénavant|à l'avenir|à partir de maintenant|chaque fois|systématiquement|` +
	`siempre|nunca|jamás|de ahora en adelante|a partir de ahora|en el futuro|en adelante|cada vez|por defecto)(?:$|[^\pL])`)

// notTimeRE: the same words where they do not mean "from now on":
// "immer noch" and "toujours pas" (still), "immer wieder" (again and
// again), "wie immer" / "comme toujours" / "como siempre" (as usual), "not
// always", "never mind".
var notTimeRE = lazy(`(?i)\b(?:immer (?:noch|wieder|mehr)|noch immer|wie immer|toujours (?:pas|en cours|le même)|comme toujours|como siempre|not always|never ?mind|nie zuvor|almost always|fast immer|presque toujours|casi siempre)\b`)

// directiveRE: the sentence tells the assistant what to do: a modal
// addressed to it, "make sure", "remember", "please", "I want you to", or
// a negative order.
var directiveRE = lazy(`(?i)(?:^|[^\pL])(?:` +
	`make sure|ensure|be sure|remember to|don'?t forget|please|you (?:should|must|need to|have to|will|'ll)|you'?ll|i want you|i'?d like you|there (?:must|should|has to|needs to) be|must|should|has to|have to|needs? to|don'?t|do not|` +
	`stelle? sicher|stell sicher|sorge dafür|achte darauf|denk(?:e)? daran|merk(?:e)? dir|bitte|du (?:sollst|solltest|musst|darfst)|(?:sollst|solltest|musst|darfst) du|ich (?:möchte|will),? dass|es muss|muss|müssen|soll|sollen|keine?n?|nicht|` +
	`assure-toi|assurez-vous|veille[sz]? à|n'oublie[sz]? pas|rappelle-toi|s'il te plaît|s'il vous plaît|tu dois|tu devrais|vous devez|vous devriez|il faut|je veux que|doit|doivent|ne |n'|` +
	`asegúrate|asegúrese|recuerda|no olvides|por favor|debes|deberías|tienes que|hay que|quiero que|procura|debe|deben|no )`)

// imperativeStartRE: a sentence that opens with a verb in the imperative
// (or an infinitive used as one), the commonest of each language.
var imperativeStartRE = lazy(`(?i)^(?:and |also |und |et |y |please |bitte |)(?:` +
	`use|run|write|add|put|keep|check|test|make|ensure|remember|commit|push|ask|answer|reply|respond|speak|save|store|call|name|format|prefer|avoid|stop|start|create|sign|lint|document|explain|show|give|send|include|end|begin|open|close|make|let|say|mark|log|review|verify|update|refresh|bump|rebuild|regenerate|do|don'?t|never|always|` +
	`nutze|benutze|verwende|nimm|achte|sorge|stelle?|denk|merke?|schreib|schreibe|antworte|sprich|speichere|lege|leg|mach|mache|führe|teste|prüfe|committe|pushe|frag|frage|gib|sag|sende|erstelle|starte|öffne|halte|behalte|füge|lösche|dokumentiere|erkläre|zeige|aktualisiere|erneuere|baue|nie|immer|` +
	`utilise|utilisez|veille|assure|rappelle|écris|écrivez|réponds|répondez|parle|parlez|sauvegarde|enregistre|mets|mettez|garde|gardez|vérifie|vérifiez|teste|testez|lance|lancez|fais|faites|ajoute|ajoutez|demande|crée|créez|évite|évitez|actualise|mettez|regénère|ne|n'|` +
	`usa|utiliza|asegúrate|procura|recuerda|escribe|responde|habla|guarda|pon|mantén|comprueba|verifica|prueba|ejecuta|lanza|haz|añade|pregunta|crea|evita|actualiza|regenera|no|nunca|siempre)\b`)

// descriptiveRE: a third person doing something always: a description
// ("it always crashes", "das ist immer so"), not an order.
var descriptiveRE = lazy(`(?i)(?:^|[^\pL])(?:it|this|that|they|he|she|es|das|dies|er|sie|il|elle|ils|ça|cela|ce|esto|eso|ello|él|ella) (?:\pL+ )?(?:always|never|immer|nie|toujours|jamais|siempre|nunca)\b`)

// firstPersonHabitRE: the person stating their own standing habit: "we
// always use pnpm", "I never use that word", "ich nutze immer …", "je
// n'utilise jamais …", "siempre usamos …".
var firstPersonHabitRE = lazy(`(?i)(?:^|[^\pL])(?:i|we|ich|wir|je|j'|nous|on|yo|nosotros) (?:\pL+ ){0,2}?(?:always|never|immer|nie|niemals|toujours|jamais|siempre|nunca)\b|(?:siempre|nunca) \pL+(?:o|amos|emos|imos)\b`)

// standingOrder: a time word and a directive agree.
func standingOrder(s string) bool {
	if !timeWordRE.MatchString(s) || notTimeRE.MatchString(s) {
		return false
	}
	lead := strings.TrimLeft(leadRE.ReplaceAllString(strings.ToLower(s), ""), " ,")
	switch {
	case firstPersonHabitRE.MatchString(s):
		return true
	case descriptiveRE.MatchString(s):
		return false
	case timeWordRE.FindStringIndex(lead) != nil && timeWordRE.FindStringIndex(lead)[0] == 0:
		return true // opens with the time word: "always …", "in future …"
	}
	return imperativeStartRE.MatchString(lead) || directiveRE.MatchString(s)
}

// contrastRE: "you use A but should use B" and "use A, not B" (and "not
// A but B"), per language. Group names are not needed: the sentence is the
// quote and the rule.
var contrastRE = lazy(`(?i)` +
	// you use A but should B
	`\byou(?:'re| are)? (?:use|using|used|run|running|call|calling|start|starting)\b.+\bbut (?:you )?(?:should|need to|must|have to|ought to)\b` +
	`|\bdu (?:nutzt|benutzt|verwendest|nimmst|startest|rufst)\b.+\b(?:solltest|sollst|musst)\b.*\baber\b|\bdu (?:nutzt|benutzt|verwendest|nimmst|startest|rufst)\b.+\baber\b.*\b(?:solltest|sollst|musst)\b` +
	`|\btu (?:utilises|emploies|lances|prends|appelles)\b.+\bmais\b.*\b(?:devrais|dois|faudrait)\b` +
	`|\b(?:usas|utilizas|estás usando|ejecutas|lanzas|llamas)\b.+\bpero\b.*\b(?:deberías|debes|tienes que|hay que)\b` +
	// use A, not B / A instead of B: a verb of choosing that opens the
	// sentence or clause, a short A, then the rejected B
	"|(?:^|[,;:]\\s*|\\b(?:please|always|just|and|we|i|you should|only)\\s+)(?:use|run|start|launch|call|install|prefer|pick|choose|go with)\\s+(?:\\S+\\s+){0,4}?\\S+?,?\\s+(?:not|rather than|instead of)\\s+\\S" +
	"|(?:^|[,;:]\\s*|\\b(?:bitte|immer|nur|und|wir|ich)\\s+)(?:nutze|benutze|verwende|nimm|achte|sorge|stelle?|denk|merke?|starte|nutzen|verwenden|benutzen)\\s+(?:\\S+\\s+){0,4}?\\S+?,?\\s+(?:nicht|statt|anstatt|anstelle von)\\s+\\S|(?:^|[,;:]\\s*)nicht\\s+(?:\\S+\\s+){0,4}?\\S+?,?\\s+sondern\\s+\\S" +
	"|(?:^|[,;:]\\s*|\\b(?:toujours|seulement|et|on|nous|je)\\s+)(?:utilise|utilisez|utilisons|emploie|prends|lance)\\s+(?:\\S+\\s+){0,4}?\\S+?,?\\s+(?:pas|et non|au lieu de|plutôt que)\\s+\\S|(?:^|[,;:]\\s*)pas\\s+(?:\\S+\\s+){0,4}?\\S+?,?\\s+mais\\s+\\S" +
	"|(?:^|[,;:]\\s*|\\b(?:siempre|solo|y)\\s+)(?:usa|utiliza|emplea|ejecuta|lanza|usamos|uso|utilizamos)\\s+(?:\\S+\\s+){0,4}?\\S+?,?\\s+(?:no|en lugar de|en vez de)\\s+\\S|(?:^|[,;:]\\s*)no\\s+(?:\\S+\\s+){0,4}?\\S+?,?\\s+sino\\s+\\S")

// howIStartRE: the person saying how they run their own project: "npm run
// dev is how I launch it", "I start it with make dev", "ich starte es mit
// …", "je le lance avec …", "lo arranco con …".
var howIStartRE = lazy(`(?i)\bis how (?:i|we) (?:start|launch|run|build|test|deploy|serve|open|install)\b` +
	`|\b(?:i|we) (?:always )?(?:start|launch|run|build|test|deploy|serve) (?:it|this|the \pL+|our \pL+|my \pL+) (?:with|using|via|by running|through)\b` +
	`|\b(?:so|damit|darüber) (?:starte|starten|baue|bauen|teste|testen|deploye|deployen) (?:ich|wir)\b|\b(?:ich|wir) (?:starte|starten|baue|bauen|teste|testen|deploye|deployen) (?:es|das|sie|ihn|die \pL+|den \pL+|das \pL+|unser\pL* \pL+)? ?(?:immer )?(?:mit|über|per)\b` +
	`|\bc'est (?:comme ça|ainsi|avec \S+) que (?:je|nous|on) (?:le |la |l')?(?:lance|lançons|démarre|démarrons|teste|testons|construis|déploie)|\b(?:je|on|nous) (?:le |la |l')?(?:lance|lançons|démarre|démarrons|teste|testons|déploie) (?:\pL+ )?(?:avec|via|par)\b` +
	`|\b(?:así|con \S+) es como (?:lo |la )?(?:arranco|lanzo|ejecuto|inicio|pruebo|arrancamos|lanzamos|ejecutamos)|\b(?:lo|la) (?:arranco|lanzo|ejecuto|inicio|pruebo|arrancamos|lanzamos|ejecutamos|iniciamos) con\b`)

// conditionalRE: a condition on the person ("when I …", "wenn ich …",
// "quand je …", "cuando hablo …") opening the sentence.
var conditionalRE = lazy(`(?i)^(?:and |und |et |y |also )?(?:when|whenever|if|every time|each time|wenn|immer wenn|falls|sobald|jedes ?mal,? wenn|quand|lorsque|si|chaque fois que|cuando|siempre que|cada vez que) (?:(?:i|we|ich|wir|je|j'|nous|on|yo|nosotros)\b|\pL+(?:o|amos|emos|imos)\b)`)

// consequenceRE: what follows the condition tells the assistant what to
// do: a mapping arrow, an assignment, or a directive.
var consequenceRE = lazy(`=>|->|→|⇒|\s=\s|\b(?:then|dann|alors|entonces)\b|[,:]\s*(?:use|answer|reply|respond|speak|write|switch|nimm|nutze|antworte|sprich|schreib|verwende|utilise|réponds|parle|écris|usa|responde|habla|escribe|utiliza)\b|\byou(?:'ll| should| must| will)?\b|\bdu\b|\btu\b|\bvous\b|\b(?:tú|usted)\b`)

// everyArtefactRE: a demand on every future artefact of a kind: "every
// report must end with its sources", "all the methods have at least two
// tests", "jede Antwort muss …", "chaque commit doit …", "cada informe
// debe …".
var everyArtefactRE = lazy(`(?i)\b(?:every|each|all|any)\s+(?:\pL+\s+){0,2}?(?:must|should|needs? to|has to|have to|shall)\b` +
	`|\b(?:every|each|all(?: the| our)?)\s+(?:\pL+\s+){0,2}?(?:ha(?:ve|s)|gets?|needs?|contains?)\s+(?:at least|a minimum of|no more than|at most)\b` +
	`|\b(?:jede[rsnm]?|alle)\s+(?:\pL+\s+){0,2}?(?:ha(?:t|ben)|bekomm\pL*|braucht|brauchen)\s+(?:mindestens|höchstens)\b` +
	`|\b(?:chaque|tous les|toutes les)\s+(?:\pL+\s+){0,2}?(?:a|ont)\s+(?:au moins|au plus)\b` +
	`|\b(?:cada|todos los|todas las)\s+(?:\pL+\s+){0,2}?(?:tiene|tienen)\s+(?:al menos|como mínimo|como máximo)\b` +
	`|\b(?:jede[rsnm]?|alle)\s+(?:\pL+\s+){0,2}?(?:muss|müssen|soll|sollen|braucht|brauchen)\b` +
	`|\b(?:chaque|tous les|toutes les|tout)\s+(?:\pL+\s+){0,2}?(?:doit|doivent|devra|devront)\b` +
	`|\b(?:cada|todos los|todas las|todo)\s+(?:\pL+\s+){0,2}?(?:debe|deben|tiene que|tienen que|deberá|deberán)\b`)

// yourselfRE: the person wants the assistant to check its own work
// rather than ask them to: "test it yourself", "a file YOU can check",
// "teste es selbst", "vérifie par toi-même", "pruébalo tú mismo".
var yourselfRE = lazy(`\b(?:[Yy]ourself|YOU (?:can|could|should|must|need to)|on your own)\b` +
	`|(?i:\b(?:selbst|selber)\b)|(?i:\b(?:toi-même|vous-même|par toi-même|par vous-même)\b)|(?i:\b(?:tú mismo|tu mismo|usted mismo|por ti mismo|por tu cuenta|tú misma)\b)`)

// verifyRE: verbs of checking one's work, per language.
var verifyRE = lazy(`(?i)\b(?:test|tests|testing|check|checking|run|running|verify|try|debug|reproduce|inspect|confirm|look at|read|` +
	`test\pL*|prüf\pL*|überprüf\pL*|check\pL*|führ\pL* .*aus|probier\pL*|verifizier\pL*|schau\pL*|` +
	`vérifi\pL*|lanc\pL*|essai\pL*|exécut\pL*|contrôl\pL*|regard\pL*|` +
	`pru[eé]b\pL*|compru[eé]b\pL*|verific\pL*|ejecut\pL*|revis\pL*|mir\pL*)\b`)

// protectRE: "make sure … does not …": a protective constraint.
var protectRE = lazy(`(?i)(?:make sure|ensure|stelle? sicher|stell sicher|sorge dafür|achte darauf|assure-toi|assurez-vous|veille[sz]? à|asegúrate|asegúrese|procura)\b.*(?:\bnot\b|n't\b|\bnever\b|\bnicht\b|\bnie\b|\bkein\pL*|\bpas\b|\bjamais\b|\bno\b|\bnunca\b)`)

// vagueRE: a generic exhortation ("don't break anything") is no rule.
var vagueRE = lazy(`(?i)\b(?:anything|nothing|something|everything|etwas|nichts|alles|rien|quelque chose|nada|algo)\b`)

// tipRE: a how-to the person hands over for good: "Tip: run it with -v",
// "tips to get tpu time - use jax.profiler", "Tipp: …", "astuce : …",
// "consejo: …".
var tipRE = lazy(`(?i)^(?:pro ?tips?|tips?|hint|tipps?|hinweis|astuces?|conseils?|consejos?|trucos?)\b[^.?!]{0,60}?(?:\s?:|\s[-–—])\s+\S`)

// eventOrderRE: an order tied to an event that recurs, with a general
// object: "update STATUS.md when you complete any task", "run the linter
// after you change a file", "aktualisiere X, wenn du eine Aufgabe
// abschließt", "mets à jour X quand tu termines une tâche", "actualiza X
// cuando termines una tarea".
var eventOrderRE = lazy(`(?i)\b(?:when|whenever|after|before|once|each time|every time)\s+you\s+\pL+\s+(?:any|every|each|a|an|new)\s+\pL+` +
	`|\b(?:wenn|sobald|nachdem|bevor|jedes ?mal,? wenn)\s+du\s+(?:\pL+\s+)?(?:eine[nm]?|jede[nm]?|irgendeine[nm]?|neue[nm]?)\s+\pL+` +
	`|\b(?:quand|lorsque|après que|avant que|chaque fois que)\s+tu\s+\pL+\s+(?:une?|chaque|n'importe quel\pL*|de nouveaux|de nouvelles)\s+\pL+` +
	`|\b(?:cuando|después de que|antes de que|cada vez que|siempre que)\s+\pL+\s+(?:una?|cada|cualquier|nuevos|nuevas)\s+\pL+`)

// clauseRE divides a sentence into clauses joined by a comma or "and".
var clauseRE = lazy(`(?i),\s+|;\s+|\s+(?:and|then|und|dann|et|puis|y|luego)\s+`)

// eventOrder reports whether s is an order (a clause of it opens with an
// imperative) tied to a recurring event (eventOrderRE).
func eventOrder(s string) bool {
	if !eventOrderRE.MatchString(s) {
		return false
	}
	for _, c := range clauseRE.Split(strings.ToLower(s), -1) {
		if imperativeStartRE.MatchString(strings.TrimLeft(leadRE.ReplaceAllString(c, ""), " ,")) {
			return true
		}
	}
	return false
}

// structural recognises a durable correction by its structure. The
// returned observation has no evidence yet.
func structural(s string, before read.Action) (store.Observation, bool) {
	text := ruleText(s)
	words := len(strings.Fields(s))
	if words < 3 {
		return store.Observation{}, false
	}
	switch {
	case conditionalRE.MatchString(s) && consequenceRE.MatchString(s):
		return store.Observation{Dimension: route(s), Text: text, Confidence: 0.6}, true
	case standingOrder(s):
		return store.Observation{Dimension: store.Guards, Text: text, Confidence: 0.7}, true
	case contrastRE.MatchString(s):
		return store.Observation{Dimension: route(s), Text: text, Confidence: 0.6}, true
	case tipRE.MatchString(s):
		return store.Observation{Dimension: store.Workflow, Text: text, Confidence: 0.6}, true
	case howIStartRE.MatchString(s):
		return store.Observation{Dimension: store.Workflow, Text: text, Confidence: 0.6}, true
	case eventOrder(s):
		return store.Observation{Dimension: store.Guards, Text: text, Confidence: 0.6}, true
	case everyArtefactRE.MatchString(s):
		return store.Observation{Dimension: store.Expectations, Text: text, Confidence: 0.6}, true
	case yourselfRE.MatchString(s) && verifyRE.MatchString(s):
		return store.Observation{Dimension: store.Expectations, Text: text, Confidence: 0.6}, true
	case protectRE.MatchString(s) && !vagueRE.MatchString(s):
		return store.Observation{Dimension: store.Guards, Text: text, Confidence: 0.6}, true
	}
	if dim, ok := convention(s); ok {
		return store.Observation{Dimension: dim, Text: text, Confidence: 0.6}, true
	}
	return store.Observation{}, false
}

// politeRequestRE: "can you …?" asks the assistant to do something; it is
// an order, not a question about a fact.
var politeRequestRE = lazy(`(?i)^(?:and |also |so |ok,? |okay,? )?(?:can|could|would|will) you\b|^(?:kannst|könntest|würdest) du\b|^(?:können|könnten) sie\b|^(?:peux|pourrais)-tu\b|^(?:pouvez|pourriez)-vous\b|^¿?(?:puedes|podrías|puede|podría)\b`)

// isQuestion reports whether s asks rather than orders: it ends with a
// question mark and is not a polite request ("can you …?").
func isQuestion(s string) bool {
	return questionRE.MatchString(s) && !politeRequestRE.MatchString(strings.TrimSpace(s))
}
