package projection

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/synaxi/synaxi/proxyd/internal/projection/validate"
)

// TestCapturedSessionPrefixStable: the first two requests of one real
// worker session (the role:"system" message is sent as blocks with a
// marker first, as a string later) project to a stable prefix, the
// environment message included.
func TestCapturedSessionPrefixStable(t *testing.T) {
	eng := New(Config{AlwaysEngage: true})
	first, err := eng.ProjectBody(context.Background(), capturedBody(t, "worker-first"), "")
	require.NoError(t, err)
	second, err := eng.ProjectBody(context.Background(), capturedBody(t, "worker-thinking"), "")
	require.NoError(t, err)
	assert.Equal(t, -1, validate.PrefixBreak(first.Body, second.Body))
	strip := func(s string) string { return strings.ReplaceAll(s, `,"cache_control":{"type":"ephemeral"}`, "") }
	a := strip(gjson.GetBytes(first.Body, "messages.1").Raw)
	require.NotEmpty(t, a)
	assert.Equal(t, a, strip(gjson.GetBytes(second.Body, "messages.1").Raw),
		"the environment message is served with the same bytes whether the client sent blocks or a string")
}
