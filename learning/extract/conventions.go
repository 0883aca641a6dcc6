package extract

import (
	"strings"

	"github.com/synaxi/synaxi/learning/store"
)

// Conventions a person states once and means for good, by their
// structure, in English, German, French and Spanish (issue 24): where a
// kind of thing belongs, which existing thing is the template for new
// ones, a version pinned against another ("A, not B" where B is a
// version), and how to treat the person's own wording. Written from each
// language's grammar with conventions_test.go's sentences, never from a
// labelled set's.

// placementVerbRE: a verb of belonging followed by a place preposition:
// "belong under", "should live at", "go in", "gehören nach", "liegen
// unter", "doivent être dans", "van en".
var placementVerbRE = lazy(`(?i)\b(?:belongs?|goes|go|lives?|sits?|stays?|(?:should|must|need to|have to|has to) (?:be|live|go|sit|stay)|(?:are|is) (?:kept|stored|placed))\s+(?:always\s+)?(?:at|in|under|inside|into|next to|beside|on)\b` +
	`|\b(?:gehör\pL*|liegen|liegt|kommen|kommt|soll(?:en)?|müssen|muss)\b.*\b(?:nach|unter|ins|im|in)\s` +
	`|\b(?:doi(?:t|vent) (?:être|aller|rester|se trouver)|vont|va|se trouvent|se trouve|ont leur place|a sa place)\s+(?:toujours\s+)?(?:dans|sous|à|au|en)\b` +
	`|\b(?:van|va|deben (?:estar|ir)|debe (?:estar|ir)|viven|vive|se guardan|se guarda)\s+(?:siempre\s+)?(?:en|bajo|dentro de|a)\b`)

// placeRE: the place is a folder: a path or a word for one.
var placeRE = lazy(`(?i)\S/|\b(?:root|folder|directory|dir|package|module|repo root|top level|` +
	`ordner|verzeichnis|wurzel\pL*|paket|modul|hauptverzeichnis|` +
	`dossier|répertoire|racine|paquet|` +
	`carpeta|directorio|raíz|paquete|módulo)\b`)

// thingSubjectRE: the sentence is about one thing in hand ("it goes in
// utils"), not a kind of thing.
var thingSubjectRE = lazy(`(?i)^(?:it|this|that|this one|es|das|dies|ça|cela|ceci|il|elle|esto|eso|lo|la)\b`)

// templateRE: "use X as the template for Y", "nimm X als Vorlage für Y",
// "utilise X comme modèle pour Y", "usa X como plantilla para Y".
var templateRE = lazy(`(?i)\b(?:use|take|treat|follow)\s+.{2,60}?\s+as\s+(?:the|a|our)\s+(?:template|model|blueprint|pattern|reference|example)\s+for\b` +
	`|\b(?:\S+)\s+is\s+(?:the|our)\s+(?:template|blueprint|model)\s+for\b` +
	`|\b(?:nimm|nutze|verwende|benutze|nehmt|nutzt)\s+.{2,60}?\s+als\s+(?:vorlage|muster|schablone|vorbild|referenz)\s+für\b` +
	`|\b(?:utilise|utilisez|prends|prenez|suis|suivez)\s+.{2,60}?\s+comme\s+(?:modèle|gabarit|patron|référence|exemple)\s+pour\b` +
	`|\b(?:usa|utiliza|toma|sigue|usad|tomad)\s+.{2,60}?\s+como\s+(?:plantilla|modelo|patrón|referencia|ejemplo)\s+para\b`)

// thisOneRE: the template is for the one thing in hand, not for a kind.
var thisOneRE = lazy(`(?i)\b(?:for|für|pour|para)\s+(?:this|that|diese[nrms]?|dieses|ce|cet|cette|este|esta|esto)\b`)

// pinRE: "A, not B" (or "not B" after a pin verb) where B is a version:
// "Node 20 LTS, not Node 22", "exact versions, not :latest", "feste
// Versionen, nicht latest", "pas de latest", "no uses latest".
var pinRE = lazy(`(?i)(?:,|;|\s-)\s*(?:and\s+)?(?:not|never|nicht|nie|pas(?: de| la| le)?|jamais|no(?: uses?| utilices)?|nunca)\s+(?:\S+\s+){0,2}?(?::?latest\b|\S*\d\S*|\S+:\S+)`)

// versionRE: the kept side names a version or a pin.
var versionRE = lazy(`(?i)\b(?:pin\pL*|fix\pL*|fest\pL*|fij\pL*|exact\pL*|exakt\pL*|version\pL*|versión|versiones|lts|release)\b|\d+(?:\.\d+)+|\b\pL+ \d+\b|:\w+`)

// wordingRE: the person's own words and a wish to keep them: "as close to
// my original wording as possible", "nah an meiner Formulierung", "garde
// ma formulation", "mantén mi redacción".
var (
	ownWordsRE = lazy(`(?i)\b(?:my|meine[rnm]?|mein|ma|mes|mon|mi|mis)\s+(?:\pL+\s+)?(?:wording|words|phrasing|voice|tone|style|formulierung\pL*|wortwahl|worte[n]?|stil|tonfall|formulation|mots|ton|style|redacción|palabras|estilo|tono|voz)\b`)
	keepRE     = lazy(`(?i)\b(?:keep|close|stick|preserve|retain|don'?t (?:change|rewrite|alter)|as is|bleib\pL*|beibehalt\pL*|behalt\pL*|nah\pL*|lass\pL*|nicht (?:ändern|umschreiben)|gard\pL*|proche\pL*|conserv\pL*|respect\pL*|ne change pas|mant[eé]n\pL*|cerca|respet\pL*|no cambies)\b`)
)

// ownPlaceRE: every thing of a kind gets its own place: "each backend has
// its own folder", "jedes Modul bekommt einen eigenen Ordner", "chaque
// service a son propre dossier", "cada módulo tiene su propia carpeta".
var ownPlaceRE = lazy(`(?i)\b(?:each|every)\s+\pL+\s+(?:has|had|gets|got|should have|must have|needs)\s+(?:its|their)\s+own\s+(?:\pL+\s+)?(?:folder|directory|dir|file|package|module|subfolder|sub ?folder|namespace)` +
	`|\b(?:jede[rsnm]?)\s+\pL+\s+(?:hat|bekommt|braucht|soll)\s+(?:\pL+\s+)?(?:eine[nm]?)\s+eigene[nm]?\s+(?:ordner|verzeichnis|datei|paket|modul|unterordner)` +
	`|\bchaque\s+\pL+\s+(?:a|aura|doit avoir)\s+(?:son|sa)\s+propre\s+(?:dossier|répertoire|fichier|paquet|module|sous-dossier)` +
	`|\bcada\s+\pL+\s+(?:tiene|tendrá|debe tener)\s+(?:su)\s+propi[oa]\s+(?:carpeta|directorio|archivo|paquete|módulo|subcarpeta)`)

// classWishRE: a wish about a whole kind of thing (a bare plural, or
// "all …"): "I want folders to match the imports", "ich möchte, dass
// alle Module …", "je veux que tous les tests …", "quiero que todos los
// archivos …". "I want you to add …" is an order for the task.
var classWishRE = lazy(`(?i)\bi (?:want|'d like|would like|need)\s+(?:all\s+(?:the\s+|our\s+)?)?[a-z]+s\s+to\s+(?:\pL+)` +
	`|\bich (?:möchte|will|hätte gern),? dass (?:alle|sämtliche)\s` +
	`|\bje (?:veux|voudrais|souhaite) que (?:tous|toutes) les\s` +
	`|\bquiero que (?:todos|todas) (?:los|las)\s`)

// notYouRE: "you" is not a kind of thing.
var notYouRE = lazy(`(?i)\bi (?:want|'d like|would like|need)\s+(?:you|yours|us|them|these|those|things)\b`)

// convention recognises a stated convention; the dimension says where it
// goes.
func convention(s string) (string, bool) {
	switch {
	case ownPlaceRE.MatchString(s):
		return store.CodeStyle, true
	case classWishRE.MatchString(s) && !notYouRE.MatchString(s):
		return store.CodeStyle, true
	case placementVerbRE.MatchString(s) && placeRE.MatchString(s) && !thingSubjectRE.MatchString(s):
		return store.CodeStyle, true
	case templateRE.MatchString(s) && !thisOneRE.MatchString(s):
		return store.CodeStyle, true
	case pinRE.MatchString(s) && versionRE.MatchString(s) && ordersOrHabit(s):
		return store.Workflow, true
	case ownWordsRE.MatchString(s) && keepRE.MatchString(s):
		return store.Communication, true
	}
	return "", false
}

// subjectRE: the sentence opens with a noun phrase, so it describes
// something ("the test failed on 3.13, not on 3.12") rather than telling
// the assistant what to do ("build on 3.12, not 3.13") or saying what the
// person's team does ("we deploy with Node 20, not 22").
var subjectRE = lazy(`(?i)^(?:the|a|an|this|that|it|der|die|das|ein|eine|es|le|la|les|l'|un|une|il|ça|el|los|las|un|una|esto|eso)\b`)

// ordersOrHabit reports whether s does not open with a noun phrase.
func ordersOrHabit(s string) bool {
	return !subjectRE.MatchString(strings.TrimLeft(leadRE.ReplaceAllString(strings.ToLower(s), ""), " ,"))
}
