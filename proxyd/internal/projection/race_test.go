package projection

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConcurrentConversations: one engine serving several conversations at
// once (as the proxy does for parallel workers) serves each exactly what a
// fresh engine serves. Run with -race.
func TestConcurrentConversations(t *testing.T) {
	shared := New(Config{BudgetTokens: 8000, AlwaysEngage: true})
	var wg sync.WaitGroup
	for seed := range uint64(4) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			msgs := randomConversation(rand.New(rand.NewPCG(seed, 99)), 40)
			for n := 3; n <= len(msgs); n++ {
				if msgs[n-1]["role"] != "user" {
					continue
				}
				body := reqBody(msgs[:n])
				got, err := shared.ProjectBody(context.Background(), body, "")
				require.NoError(t, err)
				want, err := New(Config{BudgetTokens: 8000, AlwaysEngage: true}).ProjectBody(context.Background(), body, "")
				require.NoError(t, err)
				assert.Equal(t, string(want.Body), string(got.Body), "seed %d request %d", seed, n)
			}
		}()
	}
	wg.Wait()
}
