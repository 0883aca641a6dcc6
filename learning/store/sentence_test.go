package store

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSentence(t *testing.T) {
	for in, want := range map[string]string{
		"i never use that word, i always say impediment": "I never use that word, I always say impediment.",
		"never  commit without signing":                  "Never commit without signing.",
		"use pnpm, not npm!":                             "Use pnpm, not npm!",
		"wenn ich englisch spreche => original jarvis;":  "Wenn ich englisch spreche => original jarvis;",
		"i'm a go developer":                             "I'm a go developer.",
		"":                                               "",
	} {
		assert.Equal(t, want, Sentence(in), in)
	}
}
