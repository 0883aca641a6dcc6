package publish

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/learning/store"
)

var t0 = time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)

// entry makes a valid profile entry with one piece of evidence.
// entry is a confirmed entry (the user accepted it) with one quote.
func entry(scope, project, dim, text string, weight float64, quote string) store.Entry {
	if scope == store.ScopeGlobal {
		project = ""
	}
	return store.Entry{
		ID: store.NewID(scope, project, dim, text), Scope: scope, Project: project, Dimension: dim,
		Text: text, Weight: weight, Count: 1, Sessions: []string{"sess-" + dim},
		FirstSeen: t0, LastSeen: t0, State: store.Confirmed, ConfirmedBy: store.ByUser, ConfirmedAt: t0,
		Evidence: []store.Evidence{{Session: "0b7c1e2a-5f1d-4c3e-9a8b-" + fmt.Sprintf("%012d", len(text)), UUID: "a1b2c3d4-" + dim,
			Timestamp: t0, Quote: quote}},
	}
}

func TestGuardForm(t *testing.T) {
	for text, want := range map[string]string{
		"Always run gofmt before committing":                  "ALWAYS run gofmt before committing.",
		"don't mock the database in tests":                    "NEVER mock the database in tests.",
		"Do not add comments to obvious code.":                "NEVER add comments to obvious code.",
		"never ever push to main":                             "NEVER push to main.",
		"stop using pnpm":                                     "NEVER use pnpm.",
		"avoid adding dependencies":                           "NEVER add dependencies.",
		"Before editing a file, read it first":                "BEFORE editing a file, read it first.",
		"when a test fails, show the full diff":               "WHEN a test fails, show the full diff.",
		"if the build breaks, stop and ask":                   "WHEN the build breaks, stop and ask.",
		"no, use table tests":                                 "ALWAYS use table tests.",
		"use testify's require for setup errors":              "ALWAYS use testify's require for setup errors.",
		"The user prefers terse answers":                      "ALWAYS prefer terse answers.",
		"Prefers   errors wrapped with context":               "ALWAYS prefer errors wrapped with context.",
		"we use tabs, not spaces":                             "ALWAYS use tabs, not spaces.",
		"dislikes mocking the database":                       "NEVER mock the database.",
		"i prefer early returns over nested ifs":              "ALWAYS prefer early returns over nested ifs.",
		"before committing, run pre-commit actions, gitleaks": "BEFORE committing, run pre-commit actions, gitleaks.",
		"Keep API names stable!":                              "ALWAYS keep API names stable.",
		"please run the tests first":                          "ALWAYS run the tests first.",
		"from now on, never push without asking":              "NEVER push without asking.",
		"we should always sign commits":                       "ALWAYS sign commits.",
		"I think we should investigate X before touching Y":   "ALWAYS investigate X before touching Y.",
		"let's": "ALWAYS let's.",
		"reacts strongly when the assistant runs git push": "WHEN you run git push, the user reacts strongly.",
		"approves when the assistant edits files":          "WHEN you edit files, the user approves.",
		"approves when the assistant uses Bash":            "WHEN you use Bash, the user approves.",
		"reacts strongly when the assistant pushes":        "WHEN you push, the user reacts strongly.",
	} {
		kind, rule := guardForm(text)
		assert.Equal(t, want, rule, text)
		assert.True(t, strings.HasPrefix(rule, kind+" "), "%q starts with its kind %s", rule, kind)
	}
}

func TestSynthesizeGroundsAndOrders(t *testing.T) {
	entries := []store.Entry{
		entry(store.ScopeProject, "/repo", store.Workflow, "run the tests before committing", 0.4, "please run the tests before committing"),
		entry(store.ScopeGlobal, "", store.Guards, "don't mock the database", 0.9, "no, don't mock the database here"),
		entry(store.ScopeGlobal, "", store.Expertise, "writes Go daily, knows the standard library well", 0.6, "I've written Go for ten years"),
		entry(store.ScopeGlobal, "", store.AIFailures, "claimed tests passed without running them", 0.7, "you said they pass but you never ran them"),
		entry(store.ScopeProject, "/repo", store.CodeStyle, "Do not mock the database", 0.5, "again: do not mock the database"),
	}
	noEvidence := entry(store.ScopeGlobal, "", store.Guards, "ungrounded", 1, "x")
	noEvidence.Evidence = nil
	entries = append(entries, noEvidence)

	g := Synthesize(7, "/repo", entries)
	assert.Equal(t, 7, g.ProfileVersion)
	assert.Equal(t, "/repo", g.Project)
	assert.Equal(t, Deterministic, g.Renderer)
	require.Len(t, g.Guards, 2, "the two database entries make one guard; the entry without evidence none")
	assert.Equal(t, "NEVER mock the database.", g.Guards[0].Text)
	assert.Equal(t, Never, g.Guards[0].Kind)
	assert.Equal(t, []string{entries[1].ID, entries[4].ID}, g.Guards[0].Cites, "cites every entry behind it")
	assert.Len(t, g.Guards[0].Evidence, 2)
	assert.Equal(t, "ALWAYS run the tests before committing.", g.Guards[1].Text, "heaviest first")
	require.Len(t, g.Archetype, 1)
	assert.Equal(t, "Expertise: writes Go daily, knows the standard library well.", g.Archetype[0].Text)
	require.Len(t, g.Weaknesses, 1)
	assert.Equal(t, []string{entries[3].ID}, g.Weaknesses[0].Cites)
	for _, list := range [][]Item{g.Archetype, g.Guards, g.Weaknesses} {
		for _, it := range list {
			assert.NotEmpty(t, it.Cites, it.Text)
			assert.NotEmpty(t, it.Evidence, it.Text)
		}
	}
	assert.True(t, Synthesize(1, "", nil).Empty())
}

func TestRenderCitesQuotesAndStaysWithinTheCap(t *testing.T) {
	var entries []store.Entry
	for i := range 60 {
		text := "always keep rule number " + strconv.Itoa(i) + " in mind when editing the code " + strings.Repeat("carefully ", i%5)
		entries = append(entries, entry(store.ScopeGlobal, "", store.Guards, text, 1-float64(i)/100,
			"you must keep rule "+strconv.Itoa(i)+` "quoted" ünïcode`))
	}
	g := Synthesize(3, "", entries)
	full := Render(g, 100000)
	assert.True(t, strings.HasPrefix(full, Heading+"\n"))
	assert.Contains(t, full, "(profile v3, deterministic renderer;")
	assert.Contains(t, full, "1. ALWAYS keep rule number 0 in mind when editing the code. ["+entries[0].ID+"]")
	assert.Contains(t, full, `why: the user said "you must keep rule 0 \"quoted\" ünïcode" (session `+entries[0].Evidence[0].Session+", message a1b2c3d4)")
	assert.NotContains(t, full, "did not fit")

	for _, limit := range []int{500, 1000, 2500, DefaultMaxChars} {
		out := Render(g, limit)
		assert.LessOrEqual(t, utf8.RuneCountInString(out), limit, limit)
		if limit >= 1000 {
			assert.Contains(t, out, "1. ALWAYS keep rule number 0", "the heaviest guard fits")
		}
		assert.Contains(t, out, "did not fit in "+strconv.Itoa(limit))
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "   why:") {
				assert.True(t, strings.HasSuffix(line, ")"), "no item is cut: %q", line)
			}
		}
	}
	assert.Empty(t, Render(&Guidance{}, 1000))
}

func TestLongQuoteIsAVerbatimPrefix(t *testing.T) {
	long := strings.Repeat("ä", MaxQuote+50)
	got := clipQuote(long)
	assert.Equal(t, MaxQuote+1, utf8.RuneCountInString(got))
	assert.True(t, strings.HasPrefix(long, strings.TrimSuffix(got, "…")))
}

// A description no instruction can be read from is not a guard: it is kept
// as a profile line, still citing its entry and evidence.
func TestDescriptionsAreNotGuards(t *testing.T) {
	e := entry(store.ScopeGlobal, "", store.Expectations, "the user is in a hurry on Fridays", 0.5, "I'm in a hurry, it's Friday")
	g := Synthesize(1, "", []store.Entry{e})
	assert.Empty(t, g.Guards)
	require.Len(t, g.Archetype, 1)
	assert.Equal(t, "Preference: the user is in a hurry on Fridays.", g.Archetype[0].Text)
	assert.Equal(t, []string{e.ID}, g.Archetype[0].Cites)
	assert.NotEmpty(t, g.Archetype[0].Evidence)
}

// Rules a person would write (issue 24): an order inside a complaint is
// that order; a convention stated about things is kept in the person's
// words, never "ALWAYS the …".
func TestGuardFormOfComplaintsAndConventions(t *testing.T) {
	for _, tt := range []struct{ text, kind, rule string }{
		{"i told you before, never force push to main", Never, "NEVER force push to main."},
		{"again, don't commit the build output", Never, "NEVER commit the build output."},
		{"the dockerfile and the makefile should live at the repo root, not under build/", "", ""},
		{"we say impediment here, not blocker. i never use that word, i always say impediment", "", ""},
		{"use the billing service as the template for every new service", Always, "ALWAYS use the billing service as the template for every new service."},
	} {
		kind, rule := guardForm(tt.text)
		assert.Equal(t, tt.kind, kind, tt.text)
		assert.Equal(t, tt.rule, rule, tt.text)
	}
	g := Synthesize(1, "/p", []store.Entry{{ID: "x1", Scope: store.ScopeGlobal, Dimension: store.Communication,
		Text: "we say impediment here, not blocker. i never use that word, i always say impediment", State: store.Confirmed,
		Evidence: []store.Evidence{{Session: "s", UUID: "u", Quote: "I never use that word, I always say impediment."}}}})
	require.Len(t, g.Archetype, 1)
	assert.Equal(t, "Preference: we say impediment here, not blocker. I never use that word, I always say impediment.", g.Archetype[0].Text)
}
