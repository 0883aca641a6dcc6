package extract

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/synaxi/synaxi/learning/read"
)

// Sentences written for each structure rule in each language, none taken
// from a transcript: what must become a candidate, and look-alikes that
// must not (descriptions, one-off orders, questions, generic
// exhortations).
func TestStructureRules(t *testing.T) {
	after := read.Action{Tools: []string{"ran bun dev"}, Words: 40}
	for _, tt := range []struct {
		rule, lang, s string
		want          bool
	}{
		// Standing orders: a time word and a directive.
		{"standing", "en", "From now on, write the changelog entry before you open the PR.", true},
		{"standing", "en", "In future please keep the migrations in db/schema.", true},
		{"standing", "en", "Make sure you always run gofmt on the files you touch.", true},
		{"standing", "en", "Every time you add an endpoint, add it to the OpenAPI file too.", true},
		{"standing", "en", "We always squash before merging.", true},
		{"standing", "en", "It always crashes when the cache is cold.", false},
		{"standing", "en", "The build is never green on Mondays.", false},
		{"standing", "de", "Ab jetzt schreibst du die Commit-Nachrichten bitte auf Englisch.", true},
		{"standing", "de", "Achte in Zukunft darauf, dass jede Funktion einen Test hat.", true},
		{"standing", "de", "Benutze immer pnpm statt npm.", true},
		{"standing", "de", "Das Deployment hängt immer noch.", false},
		{"standing", "de", "Es hat immer wieder geklappt.", false},
		{"standing", "fr", "Désormais, lance les tests avant chaque commit.", true},
		{"standing", "fr", "À l'avenir, assure-toi que la documentation suit le code.", true},
		{"standing", "fr", "N'utilise jamais de variables globales dans ce dépôt.", true},
		{"standing", "fr", "Ça ne marche toujours pas.", false},
		{"standing", "es", "A partir de ahora, escribe los mensajes de commit en inglés.", true},
		{"standing", "es", "Asegúrate de que siempre haya pruebas para cada cambio.", true},
		{"standing", "es", "Siempre usamos yarn en este equipo.", true},
		{"standing", "es", "Esto siempre falla en el servidor.", false},
		// Conditional preferences: a condition on the person, a consequence.
		{"conditional", "en", "When I write in French, answer in French.", true},
		{"conditional", "en", "If I say ship it -> merge and tag the release.", true},
		{"conditional", "en", "If it fails again we can look at the logs.", false},
		{"conditional", "de", "Wenn ich nach einem Review frage, dann nur Kommentare, keine Änderungen.", true},
		{"conditional", "de", "Wenn wir deployen => zuerst das Staging prüfen.", true},
		{"conditional", "fr", "Quand je parle anglais, réponds en anglais.", true},
		{"conditional", "fr", "Si je dis go, alors tu pousses sur la branche.", true},
		{"conditional", "es", "Cuando hablo en español, responde en español.", true},
		{"conditional", "es", "Si yo digo listo => haz el commit.", true},
		// Contrasts: you use A but should use B; use A, not B.
		{"contrast", "en", "You're using the staging database but you should use the local one.", true},
		{"contrast", "en", "Use the api server, not the legacy gateway.", true},
		{"contrast", "en", "we use ruff rather than flake8", true},
		{"contrast", "en", "Both services use the cache so why is it not faster", false},
		{"contrast", "de", "Du verwendest den alten Client, solltest aber den neuen nehmen.", true},
		{"contrast", "de", "Nimm uv statt pip.", true},
		{"contrast", "de", "Nicht den Dev-Server, sondern den Produktionsbuild testen.", true},
		{"contrast", "fr", "Tu utilises npm mais tu devrais utiliser pnpm.", true},
		{"contrast", "fr", "Utilise podman, pas docker.", true},
		{"contrast", "es", "Usas el puerto 3000 pero deberías usar el 8080.", true},
		{"contrast", "es", "Usa vitest en lugar de jest.", true},
		// How the person runs the project.
		{"how", "en", "make dev is how we start it", true},
		{"how", "en", "I run it with docker compose up, not with the script.", true},
		{"how", "de", "Ich starte es immer mit make run.", true},
		{"how", "de", "So starte ich das: just dev", true},
		{"how", "fr", "Je le lance avec cargo run --release.", true},
		{"how", "fr", "C'est avec just que je lance le serveur.", true},
		{"how", "es", "Lo arranco con npm start.", true},
		{"how", "es", "Así es como lo lanzo: make serve", true},
		// Every future artefact.
		{"artefact", "en", "Every report must end with a list of sources.", true},
		{"artefact", "en", "Each migration should be reversible.", true},
		{"artefact", "de", "Jeder Bericht muss am Ende die Quellen nennen.", true},
		{"artefact", "de", "Alle Skripte sollen mit set -e beginnen.", true},
		{"artefact", "fr", "Chaque commit doit passer les tests.", true},
		{"artefact", "fr", "Tous les rapports doivent citer leurs sources.", true},
		{"artefact", "es", "Cada informe debe terminar con las fuentes.", true},
		{"artefact", "es", "Todos los scripts tienen que ser idempotentes.", true},
		// Check it yourself.
		{"yourself", "en", "Don't ask me to check the page, open it yourself with the browser tool.", true},
		{"yourself", "en", "Write the output to a file YOU can read and check it.", true},
		{"yourself", "en", "can you run the e2e suite yourself?", true},
		{"yourself", "de", "Teste das bitte selbst, bevor du mich fragst.", true},
		{"yourself", "fr", "Vérifie par toi-même avant de me demander.", true},
		{"yourself", "es", "Pruébalo tú mismo antes de preguntarme.", true},
		// Protective constraints.
		{"protect", "en", "Make sure the old config is not deleted, we need it as a fallback.", true},
		{"protect", "en", "Make sure you don't break anything.", false},
		{"protect", "de", "Stell sicher, dass die alte Datenbank nicht gelöscht wird.", true},
		{"protect", "fr", "Assure-toi que l'ancien serveur ne soit pas supprimé.", true},
		{"protect", "es", "Asegúrate de que la copia de seguridad no se borre.", true},
		// One-off orders, questions and hedges teach nothing.
		{"one-off", "en", "Rename the handler to ServeHTTP.", false},
		{"one-off", "en", "Use option 2.", false},
		{"one-off", "en", "Always the same error, what is going on?", false},
		{"one-off", "en", "Maybe we should always cache it?", false},
		{"one-off", "de", "Lösch bitte die Datei temp.txt.", false},
		{"one-off", "de", "Mach das erstmal ohne Tests.", false},
		{"one-off", "fr", "Corrige la faute de frappe dans le titre.", false},
		{"one-off", "fr", "Pour l'instant, ne touche pas aux tests.", false},
		{"one-off", "es", "Arregla el error de la línea 12.", false},
		{"one-off", "es", "Por ahora no hagas push.", false},
	} {
		t.Run(tt.rule+"/"+tt.lang+"/"+tt.s, func(t *testing.T) {
			_, got := classify(tt.s, after)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestPoliteRequestIsNotAQuestion(t *testing.T) {
	assert.False(t, isQuestion("can you test it yourself?"))
	assert.False(t, isQuestion("Kannst du das selbst prüfen?"))
	assert.False(t, isQuestion("¿Puedes probarlo tú mismo?"))
	assert.True(t, isQuestion("did the tests pass?"))
	assert.True(t, isQuestion("why does it always fail?"))
}
