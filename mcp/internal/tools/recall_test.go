package tools

import (
	"context"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/recall"
	"github.com/synaxi/synaxi/internal/xdg"
)

func callRecall(t *testing.T, d xdg.Dirs, ref string) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Arguments = map[string]any{"ref": ref}
	res, err := recallHandler(d)(context.Background(), req)
	require.NoError(t, err)
	return res
}

// TestRecall: the tool returns what the proxy kept under a reference, and
// an isError result, never a protocol error, for an unknown or malformed one.
func TestRecall(t *testing.T) {
	d := xdg.Dirs{State: t.TempDir()}
	out := "FAIL pkg/x\n--- FAIL: TestParse (0.00s)\n"
	require.NoError(t, recall.Put(d, []byte(out), time.Now()))
	res := callRecall(t, d, recall.Ref(out))
	assert.False(t, res.IsError)
	assert.Equal(t, out, resultText(res))
	res = callRecall(t, d, recall.Ref("never kept"))
	assert.True(t, res.IsError)
	assert.Contains(t, resultText(res), "repeat the call")
	res = callRecall(t, d, "../../etc/passwd")
	assert.True(t, res.IsError)
	assert.Contains(t, resultText(res), "not a reference")
}
