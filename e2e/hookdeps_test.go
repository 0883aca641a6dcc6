package e2e_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/e2e/claudecli"
)

// TestSessionHookLinksNoLearningMachinery keeps synaxi-session small: the
// SessionStart path reads the profile and the published guidance (store,
// publish, review) but never links the reader, the extractors, the secret
// scanner and the screen (redact, screen, gitleaks) or the terminal review
// (bubbletea); every session start would pay for them.
func TestSessionHookLinksNoLearningMachinery(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "./cmd/synaxi-session")
	cmd.Dir = filepath.Join(claudecli.RepoRoot(), "hooks")
	out, err := cmd.Output()
	require.NoError(t, err)
	deps := strings.Fields(string(out))
	require.Contains(t, deps, "github.com/synaxi/synaxi/learning/publish", "the hook does read the guidance")
	for _, dep := range deps {
		for _, banned := range []string{"synaxi/learning/read", "synaxi/learning/extract", "synaxi/learning/redact", "synaxi/learning/screen",
			"synaxi/learning/cli", "zricethezav/gitleaks", "charmbracelet/bubbletea"} {
			assert.NotContains(t, dep, banned, "synaxi-session links %s", dep)
		}
	}
}
