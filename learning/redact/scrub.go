// Package redact finds and removes secrets from text, for the learning
// loop, which must never store, queue, log or send one to a model. The
// reader (package read) redacts every human turn as it reads it (Redact),
// so what reaches an extractor, a model or a log never holds a secret; the
// screen (package screen) drops a candidate that still carries one
// (Secret) before anything is stored.
//
// What counts as a secret: the scrubber's shapes (Text: PEM blocks,
// provider API keys and tokens, JWTs, bearer credentials, key=value
// secrets, credentials in URLs, long high-entropy strings), gitleaks'
// default rules, bare hex keys of 32 digits or more, and passwords handed
// over in words in English, German, French and Spanish (Secrets).
//
// Each secret is replaced by "[REDACTED-<n>ch]" (n is the length of what
// was removed), so the result is deterministic: redacting the same text
// twice gives the same output, and redacting redacted text changes
// nothing. Detection is deliberately greedy: a false positive costs one
// candidate, a false negative leaks a credential. gitleaks' detector is
// built on first use (about 40 ms), so binaries that link the package
// without scanning pay only its init.
package redact

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"sync"
)

// MinEntropyLen and MinEntropy decide when an unbroken token of key-like
// characters is treated as a secret: at least MinEntropyLen characters with
// a Shannon entropy of at least MinEntropy bits per character. Hex strings
// (commit ids, uuids) stay below it: 16 symbols carry at most 4 bits.
const (
	MinEntropyLen = 20
	MinEntropy    = 4.2
)

// patterns are compiled on first use, so the binaries that link this
// package without scrubbing (the SessionEnd hook) do not pay for them at
// start-up.
var patterns = sync.OnceValue(func() *struct{ pem, provider, bearer, keyValue, urlCreds, long *regexp.Regexp } {
	return &struct{ pem, provider, bearer, keyValue, urlCreds, long *regexp.Regexp }{
		pem: regexp.MustCompile(`-----BEGIN [A-Z0-9 ]+-----[\s\S]*?(?:-----END [A-Z0-9 ]+-----|$)`),
		// Provider key shapes: Anthropic/OpenAI, GitHub, GitLab, Slack, AWS,
		// Google, npm, Hugging Face, Stripe, and JWTs.
		provider: regexp.MustCompile(`\b(?:sk-ant-[A-Za-z0-9_-]{10,}|sk-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{16,}|xox[abprs]-[A-Za-z0-9-]{10,}|(?:AKIA|ASIA)[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{30,}|npm_[A-Za-z0-9]{30,}|hf_[A-Za-z0-9]{30,}|[rs]k_(?:live|test)_[A-Za-z0-9]{16,}|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})`),
		bearer:   regexp.MustCompile(`(?i)\b(bearer|basic|token)\s+([A-Za-z0-9._~+/=-]{12,})`),
		keyValue: regexp.MustCompile(`(?i)\b([A-Za-z0-9_.-]*(?:password|passwd|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|client[_-]?secret|credentials?|auth)[A-Za-z0-9_.-]*)(\s*[:=]\s*|\s+is\s+)(["']?)([^\s"'&,;]{4,})`),
		urlCreds: regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://)([^\s/@:]+):([^\s/@]+)@`),
		long:     regexp.MustCompile(`[A-Za-z0-9+/=_-]{20,}`),
	}
})

func mark(n int) string { return fmt.Sprintf("[REDACTED-%dch]", n) }

// Text returns s with every secret it recognises replaced.
func Text(s string) string {
	if s == "" {
		return s
	}
	re := patterns()
	pemBlock, providerKey, bearer, keyValue, urlCreds, longToken := re.pem, re.provider, re.bearer, re.keyValue, re.urlCreds, re.long
	s = pemBlock.ReplaceAllStringFunc(s, func(m string) string { return mark(len(m)) })
	s = providerKey.ReplaceAllStringFunc(s, func(m string) string { return mark(len(m)) })
	s = urlCreds.ReplaceAllStringFunc(s, func(m string) string {
		sub := urlCreds.FindStringSubmatch(m)
		return sub[1] + mark(len(sub[2])+1+len(sub[3])) + "@"
	})
	s = bearer.ReplaceAllStringFunc(s, func(m string) string {
		sub := bearer.FindStringSubmatch(m)
		if strings.HasPrefix(sub[2], "[REDACTED-") {
			return m
		}
		return sub[1] + " " + mark(len(sub[2]))
	})
	s = keyValue.ReplaceAllStringFunc(s, func(m string) string {
		sub := keyValue.FindStringSubmatch(m)
		if strings.HasPrefix(sub[4], "[REDACTED-") || !secretish(sub[4]) {
			return m
		}
		return sub[1] + sub[2] + sub[3] + mark(len(sub[4]))
	})
	s = longToken.ReplaceAllStringFunc(s, func(m string) string {
		if len(m) >= MinEntropyLen && Entropy(m) >= MinEntropy {
			return mark(len(m))
		}
		return m
	})
	return s
}

// secretish reports whether the value of a key=value pair looks like a
// secret rather than prose ("token is expired", "password: see below").
func secretish(v string) bool {
	lower := strings.ToLower(v)
	switch lower {
	case "true", "false", "null", "none", "nil", "required", "optional", "expired",
		"invalid", "missing", "empty", "set", "unset", "here", "below", "above", "the", "your":
		return false
	}
	hasDigit, hasUpper, hasSym := false, false, false
	for _, r := range v {
		switch {
		case r >= '0' && r <= '9':
			hasDigit = true
		case r >= 'A' && r <= 'Z':
			hasUpper = true
		case !(r >= 'a' && r <= 'z'):
			hasSym = true
		}
	}
	return len(v) >= 8 || hasDigit || hasUpper || hasSym
}

// Entropy is the Shannon entropy of s in bits per byte.
func Entropy(s string) float64 {
	if s == "" {
		return 0
	}
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	n := float64(len(s))
	var h float64
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}
