package extract

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/synaxi/synaxi/learning/read"
)

// Sentences written for issue 24's structures, in four languages, none
// from a transcript or from testdata/own-heldout.tsv: what must become a
// candidate and look-alikes that must not.
func TestConventionRules(t *testing.T) {
	after := read.Action{Tools: []string{"edited files"}, Words: 40}
	for _, tt := range []struct {
		rule, lang, s string
		want          bool
	}{
		// Where a kind of thing belongs.
		{"placement", "en", "Generated protobuf code goes under internal/gen.", true},
		{"placement", "en", "Shell scripts should sit in the tools/ directory.", true},
		{"placement", "en", "It goes in the utils package.", false},
		{"placement", "en", "The server is at the office.", false},
		{"placement", "de", "Skripte gehören in den Ordner tools/.", true},
		{"placement", "de", "Die Übersetzungen sollen im Verzeichnis locales/ liegen.", true},
		{"placement", "de", "Das liegt im Ordner unten.", false},
		{"placement", "fr", "Les migrations doivent être dans le dossier db/.", true},
		{"placement", "fr", "Ça va dans le dossier utils.", false},
		{"placement", "es", "Las pruebas van en la carpeta tests/.", true},
		{"placement", "es", "Eso va en la carpeta de abajo.", false},
		{"ownplace", "en", "Every plugin has its own folder with a README.", true},
		{"ownplace", "de", "Jedes Modul bekommt einen eigenen Ordner.", true},
		{"ownplace", "fr", "Chaque service a son propre dossier.", true},
		{"ownplace", "es", "Cada módulo tiene su propia carpeta.", true},
		// Which existing thing is the template.
		{"template", "en", "Take the orders API as the model for every new endpoint.", true},
		{"template", "en", "Use the login page as the template for this form.", false},
		{"template", "de", "Verwende den Parser als Muster für alle weiteren Parser.", true},
		{"template", "de", "Nimm die Startseite als Vorlage für diese Seite.", false},
		{"template", "fr", "Prends le module de facturation comme référence pour les nouveaux modules.", true},
		{"template", "es", "Toma el primer capítulo como modelo para los demás capítulos.", true},
		{"template", "es", "Usa el formulario como plantilla para esta página.", false},
		// A version pinned against another.
		{"pin", "en", "Build on Python 3.12, not 3.13.", true},
		{"pin", "en", "Keep the images pinned, never :latest.", true},
		{"pin", "en", "Use the new client, not the old one.", true}, // a contrast, not a pin
		{"pin", "en", "The test failed on 3.13, not on 3.12.", false},
		{"pin", "de", "Wir bauen mit Go 1.22, nicht 1.23.", true},
		{"pin", "fr", "On déploie avec Postgres 15, pas 16.", true},
		{"pin", "es", "Compilamos con Java 17, no con la 21.", true},
		// The person's own wording.
		{"wording", "en", "Please don't rewrite my phrasing in the release notes.", true},
		{"wording", "en", "My words were clear enough.", false},
		{"wording", "de", "Lass meine Wortwahl in den Artikeln so, wie sie ist.", true},
		{"wording", "fr", "Respecte mon style quand tu corriges mes articles.", true},
		{"wording", "es", "Respeta mi estilo cuando corrijas mis artículos.", true},
		// An order tied to a recurring event with a general object.
		{"event", "en", "Regenerate the mocks after you change an interface.", true},
		{"event", "en", "Regenerate the mocks after you changed that interface.", false},
		{"event", "de", "Aktualisiere das Changelog, wenn du eine Funktion hinzufügst.", true},
		{"event", "fr", "Mets à jour le changelog quand tu ajoutes une fonction.", true},
		{"event", "es", "Actualiza el changelog cuando añadas una función.", true},
		// A demand on a whole kind: "at least".
		{"atleast", "en", "Each endpoint has at least one integration test.", true},
		{"atleast", "de", "Jede Funktion hat mindestens einen Test.", true},
		{"atleast", "fr", "Chaque fonction a au moins un test.", true},
		{"atleast", "es", "Cada función tiene al menos una prueba.", true},
		// A wish about a whole kind of thing.
		{"classwish", "en", "I want modules to mirror the public API so nothing leaks.", true},
		{"classwish", "en", "I want you to add a dark mode.", false},
		{"classwish", "de", "Ich möchte, dass alle Dateien UTF-8 sind.", true},
		{"classwish", "fr", "Je veux que tous les messages soient en anglais.", true},
		{"classwish", "es", "Quiero que todos los mensajes estén en inglés.", true},
		// Not rules: one-off orders that look like rules, questions.
		{"oneoff", "en", "Thanks, now add the always-on flag to the config.", false},
		{"oneoff", "en", "For this page the footer should always show the date, add it.", false},
		{"oneoff", "de", "Jetzt den Header immer sichtbar machen und committen.", false},
		{"question", "en", "should the logs always go to stderr?\\", false},
		{"question", "fr", "Faut-il toujours signer les commits ?\\", false},
	} {
		t.Run(tt.rule+"/"+tt.lang+"/"+tt.s, func(t *testing.T) {
			_, ok := classify(tt.s, after)
			assert.Equal(t, tt.want, ok)
		})
	}
}

// A heuristic for doubt and a how-to tip, in four languages.
func TestDoubtAndTipRules(t *testing.T) {
	after := read.Action{Tools: []string{"edited files"}, Words: 40}
	for _, tt := range []struct {
		s    string
		want bool
	}{
		{"When in doubt, read the vendored sources instead of guessing the API.", true},
		{"Im Zweifel lies die Quellen im vendor-Ordner, statt zu raten.", true},
		{"En cas de doute, lis les sources plutôt que de deviner.", true},
		{"En caso de duda, lee el código fuente en lugar de adivinar.", true},
		{"Tip: run the flaky suite with -count=20 to see it fail.", true},
		{"Tipp: den Cache mit make clean leeren, bevor du misst.", true},
		{"Astuce : lance les benchmarks deux fois et garde le second.", true},
		{"Consejo: ejecuta los benchmarks dos veces.", true},
		{"Tips are welcome.", false},
	} {
		t.Run(tt.s, func(t *testing.T) {
			_, ok := classify(tt.s, after)
			assert.Equal(t, tt.want, ok)
		})
	}
}

// Rules a person would write (issue 24 item 4): a sentence whose referent
// was said just before carries it, and a NEVER order inside a complaint is
// a guard, not only a weakness.
func TestRuleTextAndKind(t *testing.T) {
	path := session(t, "ref", "/repo",
		[2]string{"assistant", "I called them blockers in the update."},
		[2]string{"user", "We say impediment here, not blocker. I never use that word, I always say impediment."},
		[2]string{"assistant", "Force-pushed the branch."},
		[2]string{"user", "I told you before, never force push to main."})
	kept, _ := extract(t, path)
	var texts = map[string]string{}
	for _, o := range kept {
		texts[o.Evidence[0].Quote] = o.Dimension + ": " + o.Text
	}
	assert.Equal(t, "guards: We say impediment here, not blocker. I never use that word, I always say impediment", texts["I never use that word, I always say impediment."])
	assert.Equal(t, "guards: I told you before, never force push to main", texts["I told you before, never force push to main."])
}
