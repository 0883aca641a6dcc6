package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/e2e/claudecli"
)

// fakeHook denies every Read and allows everything else, like the real hook
// on a session where every Read is a re-read.
const fakeHook = `#!/bin/sh
in=$(cat)
case "$1:$in" in
pre:*'"tool_name":"Read"'*) echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"x"}}' ;;
esac
`

// plugin is a plugin root with the repository's hooks.json and launcher
// and hook as the script given.
func plugin(t *testing.T, hook string) string {
	t.Helper()
	root := t.TempDir()
	repo := claudecli.RepoRoot()
	for _, f := range []string{"hooks/hooks.json", "bin/synaxi-run", ".claude-plugin/plugin.json"} {
		data, err := os.ReadFile(filepath.Join(repo, "plugin", f))
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, f), data, 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "bin", "synaxi-noreread"), []byte(hook), 0o755))
	return root
}

func TestReport(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"-plugin", plugin(t, fakeHook), "-n", "3", "-files", "1", "-floor", "/bin/true"}, &out, &errb)
	require.Equal(t, 0, code, errb.String())
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.GreaterOrEqual(t, len(lines), 9, out.String())
	assert.Contains(t, lines[0], "| p50 ÷ launched floor p50 |")
	assert.Contains(t, lines[2], "| bare spawn: `sh -c true` |")
	assert.Contains(t, lines[2], "| 1.00× |")
	assert.Contains(t, lines[3], "an empty Go program")
	assert.Contains(t, lines[4], "via the launcher, exec'ing an empty Go program")
	assert.True(t, strings.HasSuffix(lines[4], "| 1.00× |"), "the launched floor is its own baseline: %s", lines[4])
	assert.Contains(t, lines[6], "hooks.json command line via the launcher, PreToolUse Read re-read (denied)")
	assert.Contains(t, lines[8], "PostToolUse Read of a new file (recorded)")
	assert.Contains(t, out.String(), "3 rounds")
	assert.Contains(t, out.String(), "6 re-reads were denied")
}

// A hook that does not deny a re-read would make the bench time the wrong
// path: that is an error, not a figure.
func TestRefusesAHookThatDoesNotDeny(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"-plugin", plugin(t, "#!/bin/sh\ncat >/dev/null\n"), "-n", "1", "-files", "1"}, &out, &errb)
	assert.Equal(t, 1, code)
	assert.Contains(t, errb.String(), "was not denied")
	assert.Empty(t, out.String())
}

func TestUsage(t *testing.T) {
	var out, errb bytes.Buffer
	assert.Equal(t, 2, run(context.Background(), nil, &out, &errb))
	assert.Contains(t, errb.String(), "usage")
	assert.Equal(t, 1, run(context.Background(), []string{"-plugin", t.TempDir()}, &out, &errb))
	assert.Contains(t, errb.String(), "hooks.json")
}
