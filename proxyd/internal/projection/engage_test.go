package projection

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/proxyd/internal/projection/validate"
)

// TestNotEngagedServesTheClientsBody: a short conversation that no
// projection would make cheaper is forwarded byte for byte, the stats say
// why, and the visibility export shows everything the request carries.
func TestNotEngagedServesTheClientsBody(t *testing.T) {
	msgs := []obj{user(text("goal"))}
	msgs = append(msgs, readPair("toolu_1", "/w/a.go", fileLines("a", 40))...)
	msgs = append(msgs, bashPair("toolu_2", "go test ./...", "ok")...)
	body := reqBody(msgs)
	res, err := New(Config{}).ProjectBody(context.Background(), body, "")
	require.NoError(t, err)
	assert.False(t, res.Engaged)
	assert.True(t, bytes.Equal(body, res.Body), "served as sent")
	assert.Contains(t, res.Stats.NotEngaged, "no saving predicted")
	assert.Equal(t, len(body), res.Stats.ServedBytes)
	require.NotNil(t, res.Visibility)
	f := res.Visibility.Files["/w/a.go"]
	assert.False(t, f.Evicted)
	require.Len(t, f.Visible, 1)
	assert.Equal(t, 40, f.Visible[0].End)
}

// TestEngagesWhenItPaysAndKeepsOldGenerations: a long conversation whose
// working set is several times the budget engages once the cost model
// predicts a saving; from then on every request is valid, prefix-stable
// between re-projections, and a re-projection from a later cut re-serves
// the generations before it byte-identical.
func TestEngagesWhenItPaysAndKeepsOldGenerations(t *testing.T) {
	cfg := Config{BudgetTokens: 8000}
	eng := New(cfg)
	msgs := []obj{user(text("Survey the modules."))}
	var prev *Result
	engagedAt, laterCuts := -1, 0
	for i := range 90 {
		id := fmt.Sprintf("toolu_%03d", i)
		if i%3 == 2 {
			msgs = append(msgs, bashPair(id, fmt.Sprintf("go test ./m%02d", i%20), fileLines(id, 20))...)
		} else {
			msgs = append(msgs, readPair(id, fmt.Sprintf("/w/m%02d.go", i%40), fileLines(id, 120))...)
		}
		body := reqBody(msgs)
		res, err := eng.ProjectBody(context.Background(), body, "")
		require.NoError(t, err)
		require.NoError(t, validate.Request(res.Body), "request %d", i)
		if !res.Engaged {
			require.Equal(t, -1, engagedAt, "request %d: once engaged, always engaged", i)
			require.True(t, bytes.Equal(body, res.Body), "request %d", i)
			prev = res
			continue
		}
		if engagedAt < 0 {
			engagedAt = i
			require.True(t, res.Reprojected, "engaging is a re-projection")
		}
		if prev != nil && prev.Engaged {
			brk := validate.PrefixBreak(prev.Body, res.Body)
			if !res.Reprojected {
				assert.Equal(t, -1, brk, "request %d: unsanctioned prefix change", i)
			} else if !strings.Contains(res.Stats.Note, "cut=0") {
				laterCuts++
				// The goal and the kept generations come before the break.
				assert.Greater(t, brk, 2, "request %d: the kept generations are re-served", i)
			}
		}
		prev = res
	}
	require.GreaterOrEqual(t, engagedAt, 0, "the projection engages")
	assert.Positive(t, laterCuts, "some re-projection keeps the old generation")
	assert.Positive(t, prev.Stats.Evicted, "the working set exceeds the budget")
}

// TestEngagesOnlyIntoACacheableProjection: a conversation whose projection
// pays under a model that caches 1,024-token prefixes is left as sent
// under one whose minimum is 4,096 when the projection would be shorter
// than that (with cacheMargin): uncached, it would be billed in full on
// every request. A larger budget makes it cacheable, and it engages.
func TestEngagesOnlyIntoACacheableProjection(t *testing.T) {
	opus := func(b []byte) []byte {
		return bytes.Replace(b, []byte(`"claude-sonnet-4-5"`), []byte(`"claude-opus-4-6"`), 1)
	}
	run := func(cfg Config, model func([]byte) []byte) (engagedAt int, last *Result) {
		eng := New(cfg)
		msgs := []obj{user(text("Survey the modules."))}
		engagedAt = -1
		for i := range 60 {
			id := fmt.Sprintf("toolu_%03d", i)
			msgs = append(msgs, readPair(id, fmt.Sprintf("/w/m%02d.go", i), fileLines(id, 120))...)
			body := model(reqBody(msgs))
			res, err := eng.ProjectBody(context.Background(), body, "")
			require.NoError(t, err)
			if !res.Engaged {
				require.True(t, bytes.Equal(body, res.Body), "request %d is served as sent", i)
			} else if engagedAt < 0 {
				engagedAt = i
			}
			last = res
		}
		return engagedAt, last
	}
	small := Config{BudgetTokens: 1500}
	at, _ := run(small, func(b []byte) []byte { return b })
	require.GreaterOrEqual(t, at, 0, "a 1,024-token minimum: the small projection engages")
	at, last := run(small, opus)
	assert.Equal(t, -1, at, "a 4,096-token minimum: it never engages")
	assert.Contains(t, last.Stats.NotEngaged, "too short to cache")
	at, _ = run(Config{BudgetTokens: 8000}, opus)
	assert.GreaterOrEqual(t, at, 0, "a larger projection is cacheable and engages")
}
