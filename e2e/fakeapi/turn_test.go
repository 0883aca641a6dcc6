package fakeapi

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTypedTurn(t *testing.T) {
	msgs := arr{
		user(text("first task")),
		assistant(toolUse("toolu_1", "Read", obj{"file_path": "/a"})),
		user(toolResult("toolu_1", "1\ta")),
		assistant(text("done")),
		user(text("<system-reminder>\nnoise\n</system-reminder>"), text("second ask")),
		assistant(toolUse("toolu_2", "Read", obj{"file_path": "/b"})),
		user(toolResult("toolu_2", "1\tb")),
		assistant(toolUse("toolu_3", "Read", obj{"file_path": "/c"})),
		user(toolResult("toolu_3", "1\tc")),
	}
	typed, since := viewFor(t, msgs).TypedTurn()
	assert.Equal(t, "second ask", typed, "reminders stripped, tool-result messages skipped")
	if assert.Len(t, since, 2) {
		assert.Equal(t, "toolu_2", since[0].ID)
		assert.True(t, since[0].Answered)
		assert.Equal(t, "toolu_3", since[1].ID)
	}

	typed, since = viewFor(t, msgs[:4]).TypedTurn()
	assert.Equal(t, "first task", typed)
	assert.Len(t, since, 1)
}

func TestJSONText(t *testing.T) {
	assert.Equal(t, `say \"hi\" <now> & tab\tend`, JSONText("say \"hi\" <now> & tab\tend"))
}

// A tool search's result is a tool_result of tool_reference blocks, and
// Claude Code sends "Tool loaded." beside it: not a typed turn. The loaded
// tool, declared with defer_loading, is shown to the model only while a
// reference names it.
func TestToolSearchResult(t *testing.T) {
	deferred := tool("ExitPlanMode")
	deferred["defer_loading"] = true
	loaded := arr{
		user(text("plan it")),
		assistant(toolUse("toolu_1", "ToolSearch", obj{"query": "select:ExitPlanMode"})),
		user(obj{"type": "tool_result", "tool_use_id": "toolu_1", "content": arr{obj{"type": "tool_reference", "tool_name": "ExitPlanMode"}}}, text("Tool loaded.")),
	}
	view := func(msgs arr) *View {
		p, err := parseRequest([]byte(body(t, msgs, obj{"tools": arr{tool("ToolSearch"), deferred}})))
		require.NoError(t, err)
		require.NoError(t, validate(p, false, false))
		return newView(p, http.Header{}, nil)
	}
	v := view(loaded)
	typed, since := v.TypedTurn()
	assert.Equal(t, "plan it", typed)
	assert.Len(t, since, 1)
	assert.True(t, v.HasTool("ExitPlanMode"), "referenced")
	assert.True(t, v.HasTool("ToolSearch"))

	folded := append(arr{}, loaded...)
	folded[2] = user(toolResult("toolu_1", "[folded]"))
	assert.False(t, view(folded).HasTool("ExitPlanMode"), "declared deferred, no reference in view")
}
