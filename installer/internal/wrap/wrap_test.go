package wrap

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The wrap's process behaviour (routing one launch, exit codes, signals,
// recovery after SIGKILL) is tested as scripts in
// cmd/synaxi/testdata/script/wrap_*.txtar.

func TestEnviron(t *testing.T) {
	got := Environ([]string{"A=1", "ENABLE_TOOL_SEARCH=false", "CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS=5"}, "http://127.0.0.1:9", []string{"-p"})
	assert.Equal(t, []string{"A=1", "CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS=5", "ANTHROPIC_BASE_URL=http://127.0.0.1:9", "ENABLE_TOOL_SEARCH=true", "SYNAXI_WRAPPED=1"}, got)
	got = Environ([]string{"ANTHROPIC_BASE_URL=http://elsewhere"}, "http://127.0.0.1:9", []string{"--continue"})
	assert.Equal(t, []string{"ANTHROPIC_BASE_URL=http://127.0.0.1:9", "ENABLE_TOOL_SEARCH=true", "SYNAXI_WRAPPED=1"}, got, "no print-mode wait, the old base URL gone")
}

func TestArgs(t *testing.T) {
	assert.Equal(t, []string{"--agent", Agent, "-p", "x"}, Args([]string{"-p", "x"}))
	assert.Equal(t, []string{"--agent=mine", "-p"}, Args([]string{"--agent=mine", "-p"}))
	assert.Equal(t, []string{"--print", "--agent", "mine"}, Args([]string{"--print", "--agent", "mine"}))
}

func TestWithScope(t *testing.T) {
	assert.Equal(t, []string{"A=1"}, WithScope([]string{"A=1"}, ""), "no scope: the environment as it is")
	assert.Equal(t, []string{"A=1", "ANTHROPIC_CUSTOM_HEADERS=X-Synaxi-Scope: off"}, WithScope([]string{"A=1"}, "off"))
	assert.Equal(t, []string{"ANTHROPIC_CUSTOM_HEADERS=X-Gw: 1\nX-Synaxi-Scope: all"},
		WithScope([]string{"ANTHROPIC_CUSTOM_HEADERS=X-Gw: 1\n"}, "all"), "after the user's own headers")
	for in, want := range map[string]string{"": "", "ALL": "all", " worker ": "worker", "off": "off"} {
		got, err := ParseScope(in)
		assert.NoError(t, err)
		assert.Equal(t, want, got)
	}
	_, err := ParseScope("on")
	assert.ErrorContains(t, err, `scope "on" is not all, worker or off`)
}
