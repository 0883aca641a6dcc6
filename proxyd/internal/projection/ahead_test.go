package projection

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A long fold parses ahead on another goroutine; a bad message in the
// middle fails the request as an inline parse would, and the producer
// goroutine ends.
func TestParseAheadError(t *testing.T) {
	msgs := benchConversation()[:120]
	before := runtime.NumGoroutine()
	for _, bad := range []int{aheadMin + 8, len(msgs) - 1} {
		broken := append([]obj(nil), msgs...)
		broken[bad] = obj{"content": "no role"}
		_, err := New(Config{AlwaysEngage: true}).ProjectBody(context.Background(), reqBody(broken), "")
		require.Error(t, err)
		assert.Equal(t, fmt.Sprintf("message %d has no role", bad), err.Error())
	}
	// (assert.Eventually would count its own goroutine.)
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	assert.LessOrEqual(t, runtime.NumGoroutine(), before, "the parser goroutines end")
}

// Parsing ahead or inline gives the same bytes: a fold resumed from the
// memo near the end (inline) and a cold one (ahead) agree.
func TestParseAheadSameBytes(t *testing.T) {
	msgs := benchConversation()
	body := reqBody(msgs)
	cold, err := New(Config{AlwaysEngage: true}).ProjectBody(context.Background(), body, "")
	require.NoError(t, err)
	warm := New(Config{AlwaysEngage: true})
	_, err = warm.ProjectBody(context.Background(), reqBody(msgs[:len(msgs)-2]), "")
	require.NoError(t, err)
	again, err := warm.ProjectBody(context.Background(), body, "")
	require.NoError(t, err)
	assert.Equal(t, string(cold.Body), string(again.Body))
}
