package projection

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/tokens"
	"github.com/synaxi/synaxi/proxyd/internal/projection/cachesim"
)

// wordsConversation is a worker conversation in which the user speaks
// often and at length: every few tool exchanges a long message of the
// user's or a skill's expansion (each with a marker WORDS-n), between
// reads of files larger than the budget leaves room for, so that the
// engine rebuilds from every cut, the goal's included.
func wordsConversation(turns int) []obj {
	msgs := []obj{user(text("Survey the modules and answer my questions as they come."))}
	said := 0
	for i := range turns {
		id := fmt.Sprintf("toolu_%03d", i)
		lines := make([]string, 60)
		for j := range lines {
			lines[j] = fmt.Sprintf("func M%02dF%02d(x int) int { return x*%d + %d } // module %d", i, j, j+1, i, i)
		}
		msgs = append(msgs, readPair(id, fmt.Sprintf("/repo/m%03d.go", i%40), numbered(lines))...)
		if i%5 == 4 {
			said++
			var w string
			if said%2 == 0 {
				w = fmt.Sprintf("Base directory for this skill: /skills/s%d\n\nWORDS-%d skill expansion. %s", said, said, strings.Repeat("Follow the review checklist step by step. ", 300))
			} else {
				w = fmt.Sprintf("WORDS-%d the user asks: %s", said, strings.Repeat("please also check how the modules handle negative input. ", 150))
			}
			msgs = append(msgs, assistant(text("Noted.")), user(text(w)))
		}
	}
	return msgs
}

var wordsMarker = regexp.MustCompile(`WORDS-\d+`)

// TestUserWordsWrittenOnceByRebuilds: the user's words and skill
// expansions folded out of the tail are written by at most two rebuilds
// (the one that folds them, and the first later rebuild from the goal's
// cut when the first one kept an older generation), and once in the
// goal's dialogue they are only read, however often the engine rebuilds
// from cut 0. Billed by the cache simulator on every request of the
// conversation, as a restarted engine serves it too.
func TestUserWordsWrittenOnceByRebuilds(t *testing.T) {
	msgs := wordsConversation(120)
	eng := New(Config{BudgetTokens: 4000})
	sim := cachesim.New(cachesim.MinTokensFor("claude-sonnet-4-5"), tokens.EstimateBytes)
	var rebuilding bool
	rebuildWrites := map[string]int{} // marker → blocks written by rebuilding requests
	sim.Written = func(b []byte) {
		for _, m := range wordsMarker.FindAllString(string(b), -1) {
			if rebuilding {
				rebuildWrites[m]++
			}
		}
	}
	cut0, engagedAt := 0, -1
	start := time.Unix(0, 0)
	for i := range msgs {
		if msgs[i]["role"] != "user" || i == 0 {
			continue
		}
		body := reqBody(msgs[:i+1])
		r, err := eng.ProjectBody(context.Background(), body, "")
		require.NoError(t, err)
		if r.Engaged && engagedAt < 0 {
			engagedAt = i
		}
		if r.Reprojected && strings.Contains(r.Stats.Note, " cut=0 ") {
			cut0++
		}
		rebuilding = r.Reprojected
		_, err = sim.Request(r.Body, start.Add(time.Duration(i)*time.Second))
		require.NoError(t, err)
	}
	require.GreaterOrEqual(t, engagedAt, 0, "the projection engaged")
	require.GreaterOrEqual(t, cut0, 3, "the engine rebuilt from the goal's cut several times")
	said := len(wordsMarker.FindAllString(fmt.Sprint(msgs), -1))
	require.Greater(t, said, 20)
	for m, n := range rebuildWrites {
		assert.LessOrEqual(t, n, 2, "%s written by %d rebuilds", m, n)
	}
	t.Logf("%d messages, engaged at %d, %d rebuilds from cut 0; %d passages of the user's words, written by rebuilds %v", len(msgs), engagedAt, cut0, said, rebuildWrites)
}
