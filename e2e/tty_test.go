package e2e_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/e2e/claudecli"
)

// tty is the real client running interactively in a tmux session (the
// status line and slash commands only run there), read off the screen.
type tty struct {
	t    *testing.T
	tmux string
	name string
	pid  int // the pane's process, leader of its group
	once sync.Once
}

// startTTY launches e's client in dir under tmux with exactly e's
// environment, in bypass-permissions mode, onboarding done and dir trusted
// (the client's own state in ~/.claude.json). It skips the test without
// tmux. Everything the client spawned is ended with the test.
func startTTY(t *testing.T, e *claudecli.Env, dir string) *tty {
	t.Helper()
	return startTTYMode(t, e, dir, "bypassPermissions")
}

// startTTYMode is startTTY in another permission mode (plan, default, …).
func startTTYMode(t *testing.T, e *claudecli.Env, dir, mode string) *tty {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("needs tmux to run the client interactively")
	}
	mergeJSON(t, filepath.Join(e.ClaudeDir(), "settings.json"), map[string]any{"skipDangerousModePermissionPrompt": true})
	mergeJSON(t, filepath.Join(e.Home, ".claude.json"), map[string]any{
		"hasCompletedOnboarding": true, "theme": "dark",
		"customApiKeyResponses": map[string]any{"approved": []string{"test"}, "rejected": []string{}},
		"projects":              map[string]any{dir: map[string]any{"hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true}}})

	return startInTmux(t, e, dir, 180, 45, e.Bin, "--permission-mode", mode)
}

// startInTmux runs argv in dir under tmux, on a width×height screen, with
// exactly e's environment (TERM=xterm-256color, NO_COLOR=1). It skips the
// test without tmux.
func startInTmux(t *testing.T, e *claudecli.Env, dir string, width, height int, argv ...string) *tty {
	t.Helper()
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("needs tmux to run a program interactively")
	}
	quote := func(v string) string { return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'" }
	var launch strings.Builder
	launch.WriteString("#!/bin/sh\ncd \"$1\" || exit 1\nexec env -i")
	for _, kv := range append(e.Environ(), "TERM=xterm-256color", "NO_COLOR=1") {
		k, v, _ := strings.Cut(kv, "=")
		fmt.Fprintf(&launch, " %s=%s", k, quote(v))
	}
	for _, a := range argv {
		launch.WriteString(" " + quote(a))
	}
	launch.WriteString("\n")
	launcher := filepath.Join(t.TempDir(), "launch.sh")
	require.NoError(t, os.WriteFile(launcher, []byte(launch.String()), 0o755))

	c := &tty{t: t, tmux: tmux, name: fmt.Sprintf("synaxi-e2e-%d", time.Now().UnixNano())}
	require.NoError(t, exec.Command(tmux, "new-session", "-d", "-s", c.name, "-x", strconv.Itoa(width), "-y", strconv.Itoa(height), launcher, dir).Run())
	pidOut, err := exec.Command(tmux, "display-message", "-p", "-t", c.name, "#{pane_pid}").Output()
	require.NoError(t, err)
	c.pid, _ = strconv.Atoi(strings.TrimSpace(string(pidOut)))
	t.Cleanup(c.stop)
	return c
}

// stop ends the client and everything it spawned (hooks, the MCP server,
// status line runs), so no process still writes into the temporary HOME
// when it is removed. A tmux pane leads its own process group.
func (c *tty) stop() { c.once.Do(c.kill) }

func (c *tty) kill() {
	panePID := c.pid
	_ = exec.Command(c.tmux, "kill-session", "-t", c.name).Run()
	if panePID <= 0 {
		return
	}
	for i := 0; i < 50 && syscall.Kill(-panePID, 0) == nil; i++ {
		if i == 20 {
			_ = syscall.Kill(-panePID, syscall.SIGKILL)
		}
		time.Sleep(100 * time.Millisecond)
	}
	_ = syscall.Kill(-panePID, syscall.SIGKILL)
	_ = syscall.Kill(panePID, syscall.SIGKILL)
}

// screen is what the pane shows now.
func (c *tty) screen() string {
	out, _ := exec.Command(c.tmux, "capture-pane", "-p", "-t", c.name).Output()
	return string(out)
}

// waitFor waits until the screen shows what, failing the test after d.
func (c *tty) waitFor(what string, d time.Duration) string {
	c.t.Helper()
	deadline := time.Now().Add(d)
	for {
		s := c.screen()
		if strings.Contains(s, what) {
			return s
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("%q never appeared; screen:\n%s", what, s)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// waitTurnOver waits until the screen shows what and, below its last
// occurrence, the line the client prints when a turn ends ("✻ Baked for
// 2s · done 6:11 PM"). A reply's text is on screen before its turn is
// over; a key pressed in between (Esc Esc) interrupts the turn instead of
// reaching the input box.
func (c *tty) waitTurnOver(what string, d time.Duration) string {
	c.t.Helper()
	deadline := time.Now().Add(d)
	for {
		s := c.screen()
		if i := strings.LastIndex(s, what); i >= 0 && strings.Contains(s[i:], "· done") {
			return s
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("%q and the end of its turn never appeared; screen:\n%s", what, s)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// typeLine types text and presses Enter.
func (c *tty) typeLine(text string) {
	c.t.Helper()
	require.NoError(c.t, exec.Command(c.tmux, "send-keys", "-t", c.name, "-l", text).Run())
	time.Sleep(300 * time.Millisecond)
	c.key("Enter")
}

// key presses one key by its tmux name (Enter, Escape).
func (c *tty) key(name string) {
	c.t.Helper()
	require.NoError(c.t, exec.Command(c.tmux, "send-keys", "-t", c.name, name).Run())
}
