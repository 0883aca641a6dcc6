package e2e_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/e2e/claudecli"
	"github.com/synaxi/synaxi/learning/store"
)

// The terminal review in a pseudo-terminal at 80 and 160 columns (issue
// 24): candidates grouped under their project with the right scope
// wording, a long quote wrapped so its last words stay on screen, and
// edit, accept, reject and make-global each saved; the confirmation shows
// the edited text, not the old one.
func TestReviewTerminalWidths(t *testing.T) {
	for _, width := range []int{80, 160} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			e := claudecli.NewEnv(t, "")
			profiles := store.Open(store.Dir(envXDG(e)))
			at := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
			long := "the deploy script is fine but there is one thing I keep running into with this repository, so from now on always sign the commits"
			mk := func(project, dim, text, quote string, w float64) store.Entry {
				id := store.NewID(store.ScopeProject, project, dim, text)
				return store.Entry{ID: id, Scope: store.ScopeProject, Project: project, Dimension: dim, Text: text, Weight: w,
					Count: 1, Sessions: []string{"s-" + id}, FirstSeen: at, LastSeen: at, State: store.Candidate,
					Evidence: []store.Evidence{{Session: "c330aa16-1111-4111-8111-111111111111", UUID: "u-" + id, Timestamp: at, Quote: quote}}}
			}
			es := []store.Entry{
				mk("/p/alpha", store.Guards, "never push on fridays", "never push on fridays", 0.9),
				mk("/p/alpha", store.Guards, "always sign the commits", long, 0.8),
				mk("/p/beta", store.Workflow, "use make run to start it", "use make run to start it", 0.7),
				mk("/p/beta", store.CodeStyle, "prefer early returns", "I prefer early returns", 0.6),
			}
			_, err := profiles.Update("test", func(p *store.Profile) error {
				p.Entries = append(p.Entries, es...)
				return nil
			})
			require.NoError(t, err)

			synaxi := filepath.Join(claudecli.RepoRoot(), "plugin", "bin", "synaxi")
			term := startInTmux(t, e, e.Work, width, 40, "sh", "-c", synaxi+" profile review; echo REVIEW-ENDED; sleep 60")
			screen := term.waitFor("candidate 1 of 4", time.Minute)
			assert.Contains(t, screen, "in project /p/alpha")
			assert.Contains(t, screen, "applies in project /p/alpha")
			assert.Contains(t, screen, "session c330aa16", "the transcript's own session id")
			term.key("e")
			term.key("C-u")
			term.typeLine("never push to production on a Friday")

			screen = term.waitFor("candidate 2 of 4", 30*time.Second)
			assert.Contains(t, screen, "always sign the", "the quote is wrapped, its last words on screen")
			assert.Contains(t, strings.Join(strings.Fields(screen), " "), "always sign the commits”")
			for _, l := range strings.Split(screen, "\n") {
				assert.LessOrEqual(t, len([]rune(l)), width, "a line wider than the terminal: %q", l)
			}
			term.key("a")

			screen = term.waitFor("candidate 3 of 4", 30*time.Second)
			assert.Contains(t, screen, "in project /p/beta", "the next project's heading")
			term.key("r")
			term.waitFor("candidate 4 of 4", 30*time.Second)
			term.key("g")

			screen = term.waitFor("REVIEW-ENDED", 30*time.Second)
			flat := strings.Join(strings.Fields(screen), " ")
			assert.Contains(t, flat, "accepted in your words "+es[0].ID+": never push to production on a Friday", "the confirmation shows the edited text")
			assert.Contains(t, flat, "accepted "+es[1].ID)
			assert.Contains(t, flat, "rejected "+es[2].ID)
			assert.Contains(t, flat, "accepted for every project "+es[3].ID)

			p, err := profiles.Load()
			require.NoError(t, err)
			edited := p.Find(es[0].ID)
			require.NotNil(t, edited)
			assert.Equal(t, "never push to production on a Friday", edited.Text)
			assert.Equal(t, store.Confirmed, edited.State)
			assert.Equal(t, store.Confirmed, p.Find(es[1].ID).State)
			assert.Nil(t, p.Find(es[2].ID), "rejected")
			global := p.Find(es[3].ID)
			require.NotNil(t, global)
			assert.Equal(t, store.ScopeGlobal, global.Scope)
		})
	}
}
