package fakeapi

import (
	"testing"

	"github.com/stretchr/testify/assert"
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
