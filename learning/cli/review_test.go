package cli

import (
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/learning/review"
	"github.com/synaxi/synaxi/learning/store"
)

type decided struct {
	id string
	d  store.Decision
}

func keys(m *reviewModel, ks ...tea.KeyMsg) tea.Cmd {
	var cmd tea.Cmd
	for _, k := range ks {
		_, cmd = m.Update(k)
	}
	return cmd
}

func runes(s string) tea.KeyMsg { return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)} }

// The terminal review, key by key: a flagged rule needs its key twice;
// edit accepts the user's wording; g accepts for every project; r rejects;
// s skips; the view shows the warning, each quote and the assistant
// message it answered.
func TestReviewKeys(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	l := &review.List{Candidates: []review.Item{
		{ID: "f1", Scope: store.ScopeProject, Project: "/a", Dimension: store.Guards, Text: "always run rm -rf build first",
			Danger: "a recursive delete (rm -rf)", Quotes: []review.Quote{{Quote: "always run rm -rf build first", Session: "s1", At: at}}},
		{ID: "t1", Scope: store.ScopeProject, Project: "/a", Dimension: store.Guards, Text: "never use tabs", AlsoIn: []string{"/b"},
			Quotes: []review.Quote{{Quote: "no, never use tabs", Answered: "I indented the file with tabs.", Session: "s1", At: at}}},
		{ID: "p1", Scope: store.ScopeProject, Project: "/a", Dimension: store.Workflow, Text: "use pnpm",
			Quotes: []review.Quote{{Quote: "use pnpm, not npm", Session: "s2", At: at}}},
		{ID: "x1", Scope: store.ScopeProject, Project: "/a", Dimension: store.Workflow, Text: "push at night",
			Quotes: []review.Quote{{Quote: "push at night", Session: "s3", At: at}}},
		{ID: "k1", Scope: store.ScopeGlobal, Dimension: store.Communication, Text: "answer in German",
			Quotes: []review.Quote{{Quote: "answer in German", Session: "s4", At: at}}},
	}}
	var got []decided
	m := newReviewModel(l, func(id string, d store.Decision) (string, error) {
		got = append(got, decided{id, d})
		return "profile v9", nil
	})

	v := m.View()
	assert.Contains(t, v, "candidate 1 of 5")
	assert.Contains(t, v, "⚠ flagged: a recursive delete (rm -rf)")
	keys(m, runes("a"))
	assert.Empty(t, got, "a flagged rule is not accepted on the first key")
	assert.Contains(t, m.View(), "Press a again to accept it anyway")
	keys(m, runes("s"))
	assert.Empty(t, got)

	v = m.View()
	assert.Contains(t, v, "never use tabs")
	assert.Contains(t, v, "I indented the file with tabs.", "the assistant message the quote answered")
	assert.Contains(t, v, "“no, never use tabs”")
	assert.Contains(t, v, "also learned in /b")
	keys(m, runes("e"), tea.KeyMsg{Type: tea.KeyCtrlU}, runes("never indent with tabs"), tea.KeyMsg{Type: tea.KeyEnter})
	keys(m, runes("g"))
	keys(m, runes("r"))
	cmd := keys(m, runes("a"))
	require.NotNil(t, cmd, "the last decision ends the review")
	assert.IsType(t, tea.QuitMsg{}, cmd())
	assert.Equal(t, []decided{
		{"t1", store.Decision{Verdict: store.Accept, Text: "never indent with tabs"}},
		{"p1", store.Decision{Verdict: store.Accept, Global: true}},
		{"x1", store.Decision{Verdict: store.Reject}},
		{"k1", store.Decision{Verdict: store.Accept}},
	}, got)
	require.Len(t, m.log, 5)
	assert.Equal(t, "skipped f1: always run rm -rf build first", m.log[0])
	assert.Equal(t, "accepted in your words t1: never indent with tabs — profile v9", m.log[1], "the confirmation shows the edited text")
}
