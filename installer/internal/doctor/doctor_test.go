package doctor

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/installer/internal/fakes"
	"github.com/synaxi/synaxi/installer/internal/setup"
	"github.com/synaxi/synaxi/internal/xdg"
)

func TestMain(m *testing.M) {
	fakes.Main(nil)
	os.Exit(m.Run())
}

func home(t *testing.T) xdg.Dirs {
	h := t.TempDir()
	t.Setenv("HOME", h)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	for k, v := range map[string]string{"XDG_CONFIG_HOME": "c", "XDG_DATA_HOME": "d", "XDG_STATE_HOME": "s", "XDG_CACHE_HOME": "k"} {
		t.Setenv(k, filepath.Join(h, v))
	}
	return xdg.Resolve()
}

func TestDoctorPrintsConfigSources(t *testing.T) {
	d := home(t)
	require.NoError(t, os.MkdirAll(d.Config, 0o700))
	require.NoError(t, os.WriteFile(d.ConfigFile(), []byte("# mine\n[proxy]\n\nupstream = \"http://127.0.0.1:11434\"\n"), 0o600))
	t.Setenv("SYNAXI_NOREREAD_MIN_TOKENS", "400")
	var out bytes.Buffer
	Doctor(context.Background(), &out, Env{Getenv: os.Getenv, Claude: "/nonexistent/claude"})
	s := out.String()
	assert.Regexp(t, regexp.MustCompile(`proxy.upstream\s+= "http://127.0.0.1:11434"\s+\(file `+regexp.QuoteMeta(d.ConfigFile())+`:4\)`), s)
	assert.Regexp(t, `noreread.min_tokens\s+= "400"\s+\(env SYNAXI_NOREREAD_MIN_TOKENS\)`, s)
	assert.Regexp(t, `proxy.count_tokens\s+= "true"\s+\(default\)`, s)
	assert.Contains(t, s, "[FAIL] claude CLI")
	assert.Contains(t, s, "fix: ")
}

func TestDoctorNamesBadConfigKey(t *testing.T) {
	d := home(t)
	require.NoError(t, os.MkdirAll(d.Config, 0o700))
	require.NoError(t, os.WriteFile(d.ConfigFile(), []byte("[proxy]\nport = 99999\n"), 0o600))
	var out bytes.Buffer
	n := Doctor(context.Background(), &out, Env{Getenv: os.Getenv})
	assert.Positive(t, n)
	assert.Contains(t, out.String(), "[FAIL] config: "+d.ConfigFile()+":2: proxy.port")
	assert.Contains(t, out.String(), "showing defaults")
}

func TestStatusAndDoctorAfterInstall(t *testing.T) {
	d := home(t)
	binDir, claude := fakes.Bins(t)
	repo := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(repo, ".claude-plugin"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(repo, ".claude-plugin", "marketplace.json"), []byte(`{}`), 0o644))
	opts := setup.Options{Claude: claude, BinSource: binDir, RepoRoot: repo, Route: true, Out: &bytes.Buffer{}}
	require.NoError(t, setup.Install(context.Background(), opts))
	t.Cleanup(func() { _ = setup.Uninstall(context.Background(), opts) })

	var out bytes.Buffer
	require.NoError(t, Status(context.Background(), &out, Env{Getenv: os.Getenv}))
	s := out.String()
	assert.Regexp(t, `proxy\s+running at http://127.0.0.1:\d+`, s)
	assert.Contains(t, s, "synaxi@synaxi installed and enabled")
	assert.Contains(t, s, "status line  composed")
	assert.Regexp(t, `routing\s+every Claude Code session`, s)
	assert.Contains(t, s, "0 sessions, 0 requests")

	out.Reset()
	Doctor(context.Background(), &out, Env{Getenv: os.Getenv, Claude: claude})
	for _, ok := range []string{"[ok  ] plugin", "[ok  ] status line", "[ok  ] proxy", "[ok  ] routing: settings route Claude Code through http://127.0.0.1:"} {
		assert.Contains(t, out.String(), ok)
	}
	_ = d
}
