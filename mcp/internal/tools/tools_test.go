package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/mapgen/walk"
)

func TestBound(t *testing.T) {
	short := "a\nb\n"
	assert.Equal(t, short, bound(short))

	line := strings.Repeat("x", 99) + "\n"
	long := strings.Repeat(line, 1000) // 100,000 bytes
	got := bound(long)
	assert.Less(t, len(got), MaxResultChars+200)
	body, note, ok := strings.Cut(got, "… truncated: ")
	assert.True(t, ok)
	assert.Equal(t, 400, strings.Count(body, "\n"), "cut at a line boundary")
	assert.Contains(t, note, "600 more lines (60000 bytes) not shown")

	oneLine := strings.Repeat("é", MaxResultChars) // no newline, multibyte
	got = bound(oneLine)
	assert.True(t, strings.HasPrefix(got, strings.Repeat("é", MaxResultChars/2)))
	assert.Contains(t, got, "… truncated")
}

// TestToolsListAlwaysLoadsOnlyRecall: on the wire, tools/list marks recall,
// and no other tool, with the _meta key by which Claude Code keeps a tool's
// schema loaded instead of deferring it behind ToolSearch.
func TestToolsListAlwaysLoadsOnlyRecall(t *testing.T) {
	root, err := walk.NewRoot(t.TempDir())
	require.NoError(t, err)
	s := New(Options{Root: root, Version: "test"})
	ctx := context.Background()
	s.HandleMessage(ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`))
	out, err := json.Marshal(s.HandleMessage(ctx, []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)))
	require.NoError(t, err)
	var resp struct {
		Result struct {
			Tools []struct {
				Name string                     `json:"name"`
				Meta map[string]json.RawMessage `json:"_meta"`
			} `json:"tools"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal(out, &resp), string(out))
	loaded := map[string]string{}
	for _, tool := range resp.Result.Tools {
		loaded[tool.Name] = string(tool.Meta[AlwaysLoadMeta])
	}
	assert.Equal(t, map[string]string{
		RepoMap: "", FileOutline: "", FindSymbol: "", Profile: "",
		ReviewCandidates: "", ReviewDecide: "", Recall: "true",
	}, loaded)
}
