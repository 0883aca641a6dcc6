package projection

import (
	"context"
	"math/rand/v2"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/recall"
)

var recallRE = regexp.MustCompile(`\[recall (r[0-9a-f]{16})\]`)

// TestFoldNotesNameRecall: every command or search output a fold note
// marks with a recall reference was handed to the proxy (Result.Recall)
// by the request whose fold evicted it, under that reference; a fresh
// engine folding the whole conversation hands all of them over again.
func TestFoldNotesNameRecall(t *testing.T) {
	msgs := randomConversation(rand.New(rand.NewPCG(5, 28)), 80)
	e := New(Config{BudgetTokens: 4000, AlwaysEngage: true})
	kept := map[string]string{}
	var last []byte
	named := 0
	for k := 3; k <= len(msgs); k++ {
		if msgs[k-1]["role"] != "user" {
			continue
		}
		last = reqBody(msgs[:k])
		res, err := e.ProjectBody(context.Background(), last, "")
		require.NoError(t, err)
		for _, text := range res.Recall {
			kept[recall.Ref(text)] = text
		}
		for _, m := range recallRE.FindAllStringSubmatch(string(res.Body), -1) {
			_, ok := kept[m[1]]
			require.True(t, ok, "request %d names %s, never handed over", k, m[1])
			named++
		}
	}
	require.Positive(t, named, "some command output was folded out")
	fresh, err := New(Config{BudgetTokens: 4000, AlwaysEngage: true}).ProjectBody(context.Background(), last, "")
	require.NoError(t, err)
	for _, m := range recallRE.FindAllStringSubmatch(string(fresh.Body), -1) {
		found := false
		for _, text := range fresh.Recall {
			found = found || recall.Ref(text) == m[1]
		}
		assert.True(t, found, "a fresh engine hands over %s too", m[1])
	}
}
