package redact

import (
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/rs/zerolog"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/logging"
)

// Finding is one secret in a text: the byte range [Start, End) and the rule
// that found it.
type Finding struct {
	Start, End int
	Rule       string
}

// leaks is gitleaks' detector with its default rules, built once (about
// 40 ms: its rules compile then), its logging silenced.
var leaks = sync.OnceValues(func() (*detect.Detector, error) {
	logging.Logger = zerolog.Nop()
	return detect.NewDetectorDefaultConfig()
})

// wordPatterns are the secret shapes gitleaks' rules leave to context: a
// bare 32-or-more hex key, and passwords handed over in words, in English,
// German, French and Spanish ("my password is …", "Passwort: …", "le mot
// de passe est …", "la contraseña es …").
var wordPatterns = sync.OnceValue(func() []struct {
	rule string
	re   *regexp.Regexp
	sub  int
} {
	word := `(?:password|passwd|passphrase|pwd|pass|passwort|kennwort|mot de passe|mdp|contraseña|contrasena|clave)`
	return []struct {
		rule string
		re   *regexp.Regexp
		sub  int
	}{
		{"hex-key", regexp.MustCompile(`\b[0-9a-fA-F]{32,}\b`), 0},
		{"password-phrase", regexp.MustCompile(`(?i)\b` + word + `\b(?:\s+(?:for|für|pour|para|de|del|of|von|vom|du|zum|zur)\s+\S+){0,2}\s*(?:\s(?:is|ist|lautet|est|es|was|war|sera|será|would be)\b\s*[:=]?|[:=])\s*["'«„]?([^\s"'»“]{3,})`), 1},
		{"password-phrase", regexp.MustCompile(`(?i)\b(?:with|mit|avec|con)\s+(?:the\s+|das\s+|dem\s+|le\s+|la\s+|el\s+)?` + word + `\s+["'«„]?([^\s"'»“]{4,})`), 1},
	}
})

// notAValue are words that follow "password is" in prose, not secrets.
var notAValue = []string{
	"stored", "required", "wrong", "incorrect", "invalid", "expired", "missing", "set", "unset", "empty", "correct", "ok",
	"hashed", "encrypted", "changed", "reset", "here", "below", "above", "the", "a", "an", "not", "in", "too", "still", "now",
	"your", "my", "our", "their", "saved", "secret", "redacted", "none", "null", "nil", "true", "false", "optional",
	"gespeichert", "falsch", "richtig", "abgelaufen", "leer", "nicht", "noch", "jetzt", "geändert", "verschlüsselt", "der", "die", "das", "dein", "mein",
	"stocké", "faux", "expiré", "vide", "pas", "encore", "changé", "chiffré", "le", "la", "ton", "mon",
	"guardada", "incorrecta", "caducada", "vacía", "no", "todavía", "cambiada", "cifrada", "el", "tu", "mi",
}

// Secrets returns the secrets in s that gitleaks' default rules, bare hex
// keys of 32 digits or more, and passwords handed over in words in four
// languages find, ordered by position, overlaps kept. The scrubber's own
// shapes (Text) are not listed; Redact and Secret apply both.
func Secrets(s string) []Finding {
	if s == "" {
		return nil
	}
	var out []Finding
	if d, err := leaks(); err == nil {
		for _, f := range d.DetectString(s) {
			sec := f.Secret
			if sec == "" {
				sec = f.Match
			}
			for off := 0; sec != ""; {
				i := strings.Index(s[off:], sec)
				if i < 0 {
					break
				}
				out = append(out, Finding{off + i, off + i + len(sec), "gitleaks:" + f.RuleID})
				off += i + len(sec)
			}
		}
	}
	for _, p := range wordPatterns() {
		for _, m := range p.re.FindAllStringSubmatchIndex(s, -1) {
			a, b := m[2*p.sub], m[2*p.sub+1]
			if a < 0 {
				continue
			}
			v := strings.ToLower(strings.TrimRight(s[a:b], ".,;!?)"))
			if p.sub > 0 && (slices.Contains(notAValue, v) || strings.HasPrefix(v, "[redacted-")) {
				continue
			}
			out = append(out, Finding{a, a + len(strings.TrimRight(s[a:b], ".,;!?)")), p.rule})
		}
	}
	slices.SortFunc(out, func(a, b Finding) int { return a.Start - b.Start })
	return out
}

// Redact returns s with every finding of Secrets, then every shape Text
// knows, replaced by the scrubber's mark, "[REDACTED-<n>ch]".
func Redact(s string) string {
	fs := Secrets(s)
	if len(fs) == 0 {
		return Text(s)
	}
	var b strings.Builder
	at := 0
	for _, f := range fs {
		if f.End <= at {
			continue
		}
		start := max(f.Start, at)
		b.WriteString(s[at:start])
		b.WriteString(mark(f.End - start))
		at = f.End
	}
	b.WriteString(s[at:])
	return Text(b.String())
}

// Secret names the first secret in s (a rule name, never the secret), or
// "": the mark of a redacted one, a shape of the scrubber (Text), or a
// finding of Secrets.
func Secret(s string) string {
	switch {
	case s == "":
		return ""
	case strings.Contains(s, "[REDACTED-"):
		return "redacted secret"
	case Text(s) != s:
		return "scrubber"
	}
	if fs := Secrets(s); len(fs) > 0 {
		return fs[0].Rule
	}
	return ""
}
