package publish

import (
	"slices"
	"strings"
	"testing"
	"unicode"
)

// FuzzGuardForm: any entry text gives either no rule (text without a
// letter, or a description no instruction can be read from) or a rule that
// starts with its kind, the same every time.
func FuzzGuardForm(f *testing.F) {
	for _, s := range []string{"don't mock the db", "stop using x", "no, use pnpm", "Before X, Y", "reacts strongly when the assistant runs git push", "", "no,", "when",
		"the user prefers terse answers", "we use tabs", "dislikes mocking", "I am in a hurry"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		kind, rule := guardForm(text)
		if k2, r2 := guardForm(text); k2 != kind || r2 != rule {
			t.Fatalf("guardForm(%q) is not deterministic: %q then %q", text, rule, r2)
		}
		if kind == "" {
			if rule != "" {
				t.Fatalf("guardForm(%q) = no kind but rule %q", text, rule)
			}
			return
		}
		if !slices.Contains(Kinds, kind) || !strings.HasPrefix(rule, kind+" ") || !strings.ContainsFunc(rule[len(kind):], unicode.IsLetter) {
			t.Fatalf("guardForm(%q) = %q, %q", text, kind, rule)
		}
	})
}

// FuzzCheck: whatever a model answers, Check never panics, and what it
// accepts cites only the given entries and keeps the guard forms.
func FuzzCheck(f *testing.F) {
	es := modelEntries()
	g := Synthesize(2, "", es)
	f.Add(`{"guards":[{"text":"NEVER mock the database.","cites":["` + es[0].ID + `"]},{"text":"ALWAYS run the tests.","cites":["` + es[1].ID + `"]}]}`)
	f.Add("```json\n{}\n```")
	f.Add(`{"guards":null,"archetype":[{"text":"x","cites":["nope"]}]}`)
	f.Fuzz(func(t *testing.T, content string) {
		m, err := Check(g, es, content)
		if err != nil {
			return
		}
		ids := map[string]bool{}
		for _, e := range es {
			ids[e.ID] = true
		}
		for _, list := range [][]Item{m.Archetype, m.Guards, m.Weaknesses} {
			for _, it := range list {
				if len(it.Cites) == 0 || len(it.Evidence) == 0 {
					t.Fatalf("accepted an ungrounded item %+v", it)
				}
				for _, id := range it.Cites {
					if !ids[id] {
						t.Fatalf("accepted a citation of %q", id)
					}
				}
			}
		}
		for _, it := range m.Guards {
			if !slices.Contains(Kinds, it.Kind) {
				t.Fatalf("accepted guard %q", it.Text)
			}
		}
	})
}
