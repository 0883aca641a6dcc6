package e2e_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/e2e/claudecli"
)

// hookEntries is every (binary, mode) plugin/hooks/hooks.json runs through
// the launcher.
func hookEntries(t *testing.T) map[string][]string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(claudecli.RepoRoot(), "plugin", "hooks", "hooks.json"))
	require.NoError(t, err)
	var doc struct {
		Hooks map[string][]struct {
			Hooks []struct{ Args []string }
		}
	}
	require.NoError(t, json.Unmarshal(raw, &doc))
	modes := map[string][]string{}
	for _, groups := range doc.Hooks {
		for _, g := range groups {
			for _, h := range g.Hooks {
				require.GreaterOrEqual(t, len(h.Args), 2, "a hook runs synaxi-run BINARY [MODE]: %v", h.Args)
				bin, mode := h.Args[1], ""
				if len(h.Args) > 2 {
					mode = h.Args[2]
				}
				if !slices.Contains(modes[bin], mode) {
					modes[bin] = append(modes[bin], mode)
				}
			}
		}
	}
	require.NotEmpty(t, modes)
	return modes
}

// TestHookArgumentContract runs every hook binary hooks.json names, and the
// status line, with the same bad usages: each answers alike (hookio.Command:
// exit 0, nothing on stdout, its usage line on stderr, stdin unread) and
// prints its version alike.
func TestHookArgumentContract(t *testing.T) {
	require.NoError(t, claudecli.BuildPlugin())
	bins := hookEntries(t)
	bins["synaxi-statusline"] = nil
	for bin, modes := range bins {
		path := filepath.Join(claudecli.RepoRoot(), "plugin", "bin", bin)
		run := func(t *testing.T, args ...string) (stdout, stderr string, code int) {
			t.Helper()
			cmd := exec.Command(path, args...)
			cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "XDG_STATE_HOME="+t.TempDir(),
				"XDG_CONFIG_HOME="+t.TempDir(), "XDG_DATA_HOME="+t.TempDir(), "XDG_CACHE_HOME="+t.TempDir())
			cmd.Stdin = strings.NewReader(`{"session_id":"s"}`)
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			err := cmd.Run()
			if _, ok := err.(*exec.ExitError); err != nil && !ok {
				t.Fatalf("run %s: %v", bin, err)
			}
			return out.String(), errb.String(), cmd.ProcessState.ExitCode()
		}
		t.Run(bin, func(t *testing.T) {
			bad := [][]string{{"no-such-mode"}, {"-x"}}
			for _, m := range modes {
				if m != "" {
					bad = append(bad, []string{m, "extra"})
				}
			}
			for _, args := range bad {
				out, errs, code := run(t, args...)
				assert.Equal(t, 0, code, "%s %v: a hook never fails Claude Code over its arguments", bin, args)
				assert.Empty(t, out, "%s %v", bin, args)
				assert.True(t, strings.HasPrefix(errs, "usage: "+bin+" "), "%s %v: stderr %q", bin, args, errs)
			}
			out, errs, code := run(t, "-version")
			assert.Equal(t, 0, code)
			assert.True(t, strings.HasPrefix(out, bin+" "), "%s -version: %q", bin, out)
			assert.Empty(t, errs)
		})
	}
}
