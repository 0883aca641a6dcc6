package store

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// loneI is the English pronoun written in lower case.
var loneI = regexp.MustCompile(`(^|[\s(“"'])i(\s|'|’|$)`)

// Sentence writes an entry's text as a sentence: its spaces collapsed, its
// first letter a capital, "i" as "I", ending with a full stop unless it
// ends with punctuation already.
func Sentence(text string) string {
	t := WithI(strings.Join(strings.Fields(text), " "))
	if t == "" {
		return t
	}
	r, n := utf8.DecodeRuneInString(t)
	t = string(unicode.ToUpper(r)) + t[n:]
	if last, _ := utf8.DecodeLastRuneInString(t); !unicode.IsPunct(last) {
		t += "."
	}
	return t
}

// WithI writes the English pronoun "i" as "I".
func WithI(t string) string {
	for loneI.MatchString(t) {
		t = loneI.ReplaceAllString(t, "${1}I${2}")
	}
	return t
}
