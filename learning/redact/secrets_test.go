package redact

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// parseShapes splits a secret-shapes file: one shape a line, "\\n" for a
// line break, "#" lines are comments.
func parseShapes(data string) []string {
	var out []string
	for _, l := range strings.Split(data, "\n") {
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		out = append(out, strings.ReplaceAll(l, `\n`, "\n"))
	}
	return out
}

// secretShapes reads testdata/secret-shapes.txt.
func secretShapes(t testing.TB) []string {
	t.Helper()
	data, err := os.ReadFile("testdata/secret-shapes.txt")
	require.NoError(t, err)
	return parseShapes(string(data))
}

func TestSecretShapesAreFound(t *testing.T) {
	for _, s := range secretShapes(t) {
		text := "please remember this for later: " + s + " and use it"
		assert.True(t, Secret(text) != "", s)
		red := Redact(text)
		assert.Contains(t, red, "[REDACTED-", s)
		for _, part := range strings.Fields(s) {
			if len(part) >= 12 {
				assert.NotContains(t, red, part, "left in %q", red)
			}
		}
	}
}

func TestProseIsNotASecret(t *testing.T) {
	for _, s := range []string{
		"never commit passwords to git",
		"the password is stored in the vault, never in the repo",
		"Passwörter gehören nicht ins Repository",
		"ne mets jamais de mot de passe dans le code",
		"nunca pongas contraseñas en el código",
		"revert to 2fb85c9 and rerun the tests",
		"use the token from the environment, not a literal",
	} {
		assert.False(t, Secret(s) != "", s)
	}
}

func FuzzRedact(f *testing.F) {
	for _, s := range append(secretShapes(f), "", "password:", "passwort ist", "[REDACTED-3ch]") {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r := Redact(s)
		assert.Equal(t, r, Redact(r), "redacting twice changes %q", s)
	})
}
