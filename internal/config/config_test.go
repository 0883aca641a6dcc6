package config

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/xdg"
)

// env is a getenv backed by a map.
func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func writeConfig(t *testing.T, src string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.toml")
	require.NoError(t, os.WriteFile(path, []byte(src), 0o600))
	return path
}

func setting(t *testing.T, l *Loaded, key string) Setting {
	t.Helper()
	for _, s := range l.Settings {
		if s.Key == key {
			return s
		}
	}
	t.Fatalf("no setting %s", key)
	return Setting{}
}

func TestDefaults(t *testing.T) {
	l, err := Load(filepath.Join(t.TempDir(), "missing.toml"), env(nil))
	require.NoError(t, err)
	assert.Equal(t, Default(), l.Config)
	require.NoError(t, l.Validate())

	assert.Equal(t, "https://api.anthropic.com", l.Proxy.Upstream)
	assert.True(t, l.Proxy.CountTokens)
	assert.Equal(t, int64(16<<20), l.Proxy.LogMaxBytes)
	assert.True(t, l.NoReread.Enabled)
	assert.Equal(t, 150, l.NoReread.MinTokens)
	assert.Equal(t, 3, l.NoReread.LoopThreshold)
	assert.Equal(t, "auto", l.StatusLine.Color)

	assert.Len(t, l.Settings, len(Documented()))
	for i, s := range l.Settings {
		assert.Equal(t, FromDefault, s.Source, s.Key)
		assert.Empty(t, s.Origin, s.Key)
		assert.Equal(t, EnvName(s.Key), s.Env)
		if i > 0 {
			assert.Less(t, l.Settings[i-1].Key, s.Key, "sorted by key")
		}
	}
}

func TestDocumented(t *testing.T) {
	docs := Documented()
	require.NotEmpty(t, docs)
	seen := map[string]bool{}
	for _, s := range docs {
		assert.NotEmpty(t, s.Doc, "%s has no doc tag", s.Key)
		assert.Regexp(t, `^[a-z]+\.[a-z_]+$`, s.Key)
		assert.Regexp(t, `^SYNAXI_[A-Z]+_[A-Z_]+$`, s.Env)
		assert.False(t, seen[s.Env], "duplicate %s", s.Env)
		seen[s.Env] = true
	}
	assert.Equal(t, "SYNAXI_PROXY_UPSTREAM", EnvName("proxy.upstream"))
	assert.Equal(t, "SYNAXI_NOREREAD_MIN_TOKENS", EnvName("noreread.min_tokens"))
}

func TestFileValues(t *testing.T) {
	path := writeConfig(t, `# synaxi
[proxy] # the local proxy
port = 8788
upstream = "http://127.0.0.1:11434"
upstream_model = "qwen3-coder"
idle_exit = "15m"
count_tokens = false

[projection]
budget_tokens = 120000

[noreread]
min_tokens = 0

[statusline]
color = "never"
`)
	l, err := Load(path, env(nil))
	require.NoError(t, err)
	assert.Equal(t, 8788, l.Proxy.Port)
	assert.Equal(t, "http://127.0.0.1:11434", l.Proxy.Upstream)
	assert.Equal(t, "qwen3-coder", l.Proxy.UpstreamModel)
	assert.Equal(t, 15*time.Minute, l.Proxy.IdleExit.Std())
	assert.False(t, l.Proxy.CountTokens)
	assert.Equal(t, 120000, l.Projection.BudgetTokens)
	assert.Equal(t, 0, l.NoReread.MinTokens)
	assert.Equal(t, "never", l.StatusLine.Color)
	// Keys the file does not mention keep their defaults.
	assert.True(t, l.NoReread.Enabled)
	assert.Equal(t, int64(16<<20), l.Proxy.LogMaxBytes)

	for key, line := range map[string]int{"proxy.port": 3, "proxy.idle_exit": 6, "projection.budget_tokens": 10, "statusline.color": 16} {
		s := setting(t, l, key)
		assert.Equal(t, FromFile, s.Source, key)
		assert.Equal(t, fmt.Sprintf("%s:%d", path, line), s.Origin, key)
	}
	assert.Equal(t, "15m0s", setting(t, l, "proxy.idle_exit").Value)
	assert.Equal(t, "8788", setting(t, l, "proxy.port").Value)
	assert.Equal(t, FromDefault, setting(t, l, "noreread.enabled").Source)

	t.Run("dotted keys at top level", func(t *testing.T) {
		path := writeConfig(t, "proxy.port = 9000\nnoreread.enabled = false\n")
		l, err := Load(path, env(nil))
		require.NoError(t, err)
		assert.Equal(t, 9000, l.Proxy.Port)
		assert.False(t, l.NoReread.Enabled)
		assert.Equal(t, path+":1", setting(t, l, "proxy.port").Origin)
		assert.Equal(t, path+":2", setting(t, l, "noreread.enabled").Origin)
	})
}

func TestEnvOverFile(t *testing.T) {
	path := writeConfig(t, "[proxy]\nport = 8788\nupstream = \"http://file.example\"\n[noreread]\nmin_tokens = 10\n")
	l, err := Load(path, env(map[string]string{
		"SYNAXI_PROXY_PORT":          "9999",
		"SYNAXI_NOREREAD_ENABLED":    "false",
		"SYNAXI_PROXY_IDLE_EXIT":     "90s",
		"SYNAXI_PROXY_LOG_MAX_BYTES": " 8192 ",
		"SYNAXI_STATUSLINE_COLOR":    "always",
	}))
	require.NoError(t, err)
	assert.Equal(t, 9999, l.Proxy.Port)
	assert.False(t, l.NoReread.Enabled)
	assert.Equal(t, 90*time.Second, l.Proxy.IdleExit.Std())
	assert.Equal(t, int64(8192), l.Proxy.LogMaxBytes)
	assert.Equal(t, "always", l.StatusLine.Color)
	assert.Equal(t, "http://file.example", l.Proxy.Upstream, "file value kept where env is silent")
	assert.Equal(t, 10, l.NoReread.MinTokens)

	s := setting(t, l, "proxy.port")
	assert.Equal(t, FromEnv, s.Source)
	assert.Equal(t, "SYNAXI_PROXY_PORT", s.Origin)
	assert.Equal(t, "9999", s.Value)
	assert.Equal(t, FromFile, setting(t, l, "proxy.upstream").Source)
	assert.Equal(t, FromEnv, setting(t, l, "noreread.enabled").Source)

	t.Run("empty variable is unset", func(t *testing.T) {
		l, err := Load(path, env(map[string]string{"SYNAXI_PROXY_PORT": ""}))
		require.NoError(t, err)
		assert.Equal(t, 8788, l.Proxy.Port)
		assert.Equal(t, FromFile, setting(t, l, "proxy.port").Source)
	})
}

// TestLoadDirs: the config file of synaxi's directories and the environment
// getenv reads; a bad file yields the defaults with the error naming it.
func TestLoadDirs(t *testing.T) {
	d := xdg.Dirs{Config: t.TempDir()}
	c, err := LoadDirs(d, env(map[string]string{"SYNAXI_NOREREAD_LOOP_THRESHOLD": "0"}))
	require.NoError(t, err)
	assert.Equal(t, 0, c.NoReread.LoopThreshold)

	t.Setenv("SYNAXI_NOREREAD_LOOP_THRESHOLD", "7")
	c, err = LoadDirs(d, os.Getenv)
	require.NoError(t, err)
	assert.Equal(t, 7, c.NoReread.LoopThreshold)

	require.NoError(t, os.WriteFile(d.ConfigFile(), []byte("[proxy]\nport = \"x\"\n"), 0o600))
	c, err = LoadDirs(d, env(nil))
	require.Error(t, err)
	assert.Contains(t, err.Error(), d.ConfigFile())
	assert.Equal(t, Default(), c)
}

func TestScopeAndAliases(t *testing.T) {
	tests := []struct {
		name   string
		file   string
		env    map[string]string
		scope  string
		origin string // the variable the value came from; "" when not the environment
	}{
		{"default", "", nil, ScopeAll, ""},
		{"file", "[proxy]\nscope = \"worker\"\n", nil, ScopeWorker, ""},
		{"project all", "[proxy]\nscope = \"worker\"\n", map[string]string{"SYNAXI_PROJECT_ALL": "1"}, ScopeAll, "SYNAXI_PROJECT_ALL"},
		{"project all off means worker", "", map[string]string{"SYNAXI_PROJECT_ALL": "0"}, ScopeWorker, "SYNAXI_PROJECT_ALL"},
		{"disable projection", "", map[string]string{"SYNAXI_DISABLE_PROJECTION": "true"}, ScopeOff, "SYNAXI_DISABLE_PROJECTION"},
		{"disable false leaves the scope", "[proxy]\nscope = \"worker\"\n", map[string]string{"SYNAXI_DISABLE_PROJECTION": "0"}, ScopeWorker, ""},
		{"disable beats project all", "", map[string]string{"SYNAXI_DISABLE_PROJECTION": "1", "SYNAXI_PROJECT_ALL": "1"}, ScopeOff, "SYNAXI_DISABLE_PROJECTION"},
		{"canonical name wins", "", map[string]string{"SYNAXI_DISABLE_PROJECTION": "1", "SYNAXI_PROXY_SCOPE": "worker"}, ScopeWorker, "SYNAXI_PROXY_SCOPE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := Load(writeConfig(t, tt.file), env(tt.env))
			require.NoError(t, err)
			assert.Equal(t, tt.scope, l.Proxy.Scope)
			s := setting(t, l, "proxy.scope")
			if tt.origin != "" {
				assert.Equal(t, FromEnv, s.Source)
				assert.Equal(t, tt.origin, s.Origin)
			} else {
				assert.NotEqual(t, FromEnv, s.Source)
			}
		})
	}
	for name, bad := range map[string][2]string{
		"bad alias value names the alias": {"SYNAXI_DISABLE_PROJECTION", "maybe"},
		"bad scope":                       {"SYNAXI_PROXY_SCOPE", "main"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Load(filepath.Join(t.TempDir(), "none.toml"), env(map[string]string{bad[0]: bad[1]}))
			var ce *Error
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, "proxy.scope", ce.Key)
			assert.Contains(t, ce.Msg, bad[0])
			assert.Contains(t, ce.Msg, bad[1])
		})
	}
	for _, key := range []string{"project_all", "disable_projection"} {
		t.Run("retired "+key, func(t *testing.T) {
			path := writeConfig(t, "[proxy]\n"+key+" = true\n")
			_, err := Load(path, env(nil))
			var ce *Error
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, "proxy."+key, ce.Key)
			assert.Equal(t, 2, ce.Line)
			assert.Contains(t, ce.Msg, "scope = ")
		})
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		env     map[string]string
		key     string
		line    int
		inMsg   string
		fromEnv bool
	}{
		{name: "syntax: unclosed table", src: "[proxy\nport = 1\n", line: 1, inMsg: "table name"},
		{name: "syntax: bare value", src: "[proxy]\nport = 1\nupstream = http://x\n", key: "proxy.upstream", line: 3, inMsg: "expected value"},
		{name: "syntax: error after a good key", src: "[proxy]\nport = 1\n= 2\n", line: 3},
		{name: "syntax: duplicate key", src: "[proxy]\nport = 1\nport = 2\n", line: 3, inMsg: "already been defined"},
		{name: "wrong type: string for int", src: "[proxy]\nport = \"abc\"\n", key: "proxy.port", line: 2, inMsg: "incompatible types"},
		{name: "wrong type: string for bool", src: "\n[noreread]\nenabled = \"yes\"\n", key: "noreread.enabled", line: 3, inMsg: "boolean"},
		{name: "wrong type: float for int", src: "[noreread]\nmin_tokens = 1.5\n", key: "noreread.min_tokens", line: 2},
		{name: "wrong type: section is a value", src: "proxy = 3\n", key: "proxy", line: 1},
		{name: "wrong type: bad duration", src: "[proxy]\nport = 1\nidle_exit = \"soon\"\n", key: "proxy.idle_exit", line: 3, inMsg: `"soon"`},
		{name: "wrong type: integer duration", src: "[proxy]\nidle_exit = 900\n", key: "proxy.idle_exit", line: 2, inMsg: "duration"},
		{name: "unknown key", src: "[proxy]\nport = 1\nprot = 2\n", key: "proxy.prot", line: 3, inMsg: "unknown key"},
		{name: "unknown key after header comment", src: "[proxy] # here\nbogus = 1\n", key: "proxy.bogus", line: 2, inMsg: "unknown key"},
		{name: "unknown section", src: "[noreread]\nenabled = true\n\n[foo]\nx = 1\n", key: "foo", line: 4, inMsg: "unknown key"},
		{name: "invalid: port", src: "[proxy]\nport = 70000\n", key: "proxy.port", line: 2, inMsg: "65535"},
		{name: "invalid: upstream", src: "[proxy]\nupstream = \"api.anthropic.com\"\n", key: "proxy.upstream", line: 2, inMsg: "http"},
		{name: "invalid: upstream without host", src: "[proxy]\nupstream = \"https://\"\n", key: "proxy.upstream", line: 2},
		{name: "invalid: negative idle", src: "[proxy]\nidle_exit = \"-5m\"\n", key: "proxy.idle_exit", line: 2, inMsg: "negative"},
		{name: "invalid: probe timeout", src: "[proxy]\nprobe_timeout = \"10ms\"\n", key: "proxy.probe_timeout", line: 2, inMsg: "at least 1s"},
		{name: "invalid: budget", src: "[projection]\nbudget_tokens = 100\n", key: "projection.budget_tokens", line: 2, inMsg: "4000"},
		{name: "invalid: loop threshold", src: "noreread.loop_threshold = 1\n", key: "noreread.loop_threshold", line: 1, inMsg: "at least 2"},
		{name: "invalid: governor mode", src: "[governor]\nmode = \"loud\"\n", key: "governor.mode", line: 2, inMsg: "off, advise or on"},
		{name: "invalid: visibility url", src: "[noreread]\nvisibility_url = \"proxy.team:8787\"\n", key: "noreread.visibility_url", line: 2, inMsg: "http://"},
		{name: "invalid: visibility store", src: "[proxy]\nvisibility_store = \"http://redis:6379\"\n", key: "proxy.visibility_store", line: 2, inMsg: "redis://"},
		{name: "invalid: color", src: "[statusline]\ncolor = \"pink\"\n", key: "statusline.color", line: 2, inMsg: "pink"},
		{name: "invalid: log size", src: "[proxy]\nlog_max_bytes = 10\n", key: "proxy.log_max_bytes", line: 2},
		{name: "invalid: guidance cap", src: "[guidance]\nmax_chars = 20000\n", key: "guidance.max_chars", line: 2, inMsg: "9500"},
		{name: "invalid: guidance renderer", src: "[guidance]\nrenderer = \"llm\"\n", key: "guidance.renderer", line: 2, inMsg: "deterministic or model"},
		{name: "invalid: model renderer without url", src: "[guidance]\nrenderer = \"model\"\nmodel_url = \"localhost:11434\"\n", key: "guidance.model_url", line: 3, inMsg: "base URL"},
		{name: "invalid: model renderer without model", src: "[guidance]\nrenderer = \"model\"\nmodel_url = \"http://127.0.0.1:11434/v1\"\nmodel = \"\"\n", key: "guidance.model", line: 4, inMsg: "model name"},
		{name: "invalid: ingest extractor", src: "[ingest]\nextractor = \"gpt\"\n", key: "ingest.extractor", line: 2, inMsg: "embedded, claude, anthropic or openai"},
		{name: "invalid: learning publish", src: "[learning]\npublish = \"always\"\n", key: "learning.publish", line: 2, inMsg: "accept or reinforced"},
		{name: "invalid: ingest endpoint", src: "[ingest]\nendpoint = \"localhost:11434\"\n", key: "ingest.endpoint", line: 2, inMsg: "http://"},
		{name: "invalid: ingest tries", src: "[ingest]\nmax_tries = 0\n", key: "ingest.max_tries", line: 2, inMsg: "at least 1"},
		{name: "invalid: ingest backoff", src: "[ingest]\nretry_backoff = \"10ms\"\n", key: "ingest.retry_backoff", line: 2, inMsg: "at least 1s"},
		{name: "invalid: ingest size", src: "[ingest]\nmax_transcript_mb = 0\n", key: "ingest.max_transcript_mb", line: 2, inMsg: "at least 1"},
		{name: "env: governor mode", env: map[string]string{"SYNAXI_GOVERNOR_MODE": "stop"}, key: "governor.mode", inMsg: `"stop"`, fromEnv: true},
		{name: "env: ingest timeout", env: map[string]string{"SYNAXI_INGEST_TIMEOUT": "500ms"}, key: "ingest.timeout", inMsg: "at least 1s", fromEnv: true},
		{name: "env: unknown writer", env: map[string]string{"SYNAXI_GUIDANCE_WRITERS": "agents,windsurf"}, key: "guidance.writers", inMsg: `"windsurf"`, fromEnv: true},
		{name: "env: not a number", env: map[string]string{"SYNAXI_PROXY_PORT": "eighty"}, key: "proxy.port", inMsg: "SYNAXI_PROXY_PORT", fromEnv: true},
		{name: "env: not a duration", env: map[string]string{"SYNAXI_PROXY_IDLE_EXIT": "1 hour"}, key: "proxy.idle_exit", inMsg: "SYNAXI_PROXY_IDLE_EXIT", fromEnv: true},
		{name: "env: invalid value", src: "[proxy]\nport = 1\n", env: map[string]string{"SYNAXI_PROXY_PORT": "-1"}, key: "proxy.port", inMsg: "SYNAXI_PROXY_PORT", fromEnv: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "none.toml")
			if tt.src != "" {
				path = writeConfig(t, tt.src)
			}
			l, err := Load(path, env(tt.env))
			require.Error(t, err)
			assert.Nil(t, l)
			var ce *Error
			require.ErrorAs(t, err, &ce, "%v", err)
			assert.Equal(t, tt.key, ce.Key, "%v", err)
			assert.Contains(t, ce.Msg, tt.inMsg)
			if tt.fromEnv {
				assert.Empty(t, ce.Path)
				assert.Zero(t, ce.Line)
				assert.True(t, strings.HasPrefix(err.Error(), tt.key+": "), err.Error())
				return
			}
			assert.Equal(t, path, ce.Path)
			assert.Equal(t, tt.line, ce.Line, "%v", err)
			want := fmt.Sprintf("%s:%d: ", path, tt.line)
			if tt.key != "" {
				want += tt.key + ": "
			}
			assert.True(t, strings.HasPrefix(err.Error(), want), "%q does not start with %q", err.Error(), want)
			assert.NotContains(t, err.Error(), "last key", "position is said once")
		})
	}
}

func TestReadError(t *testing.T) {
	dir := t.TempDir()
	_, err := Load(dir, env(nil)) // a directory is not a config file
	require.Error(t, err)
	var ce *Error
	assert.False(t, errors.As(err, &ce))
	assert.Contains(t, err.Error(), dir)
}

func TestDuration(t *testing.T) {
	var d Duration
	require.NoError(t, d.UnmarshalText([]byte("0")))
	assert.Zero(t, d)
	require.NoError(t, d.UnmarshalText([]byte(" 1h30m ")))
	assert.Equal(t, 90*time.Minute, d.Std())
	text, err := d.MarshalText()
	require.NoError(t, err)
	assert.Equal(t, "1h30m0s", string(text))
	require.Error(t, d.UnmarshalText([]byte("90")))
}

// FuzzLoad feeds arbitrary files to Load: it never panics, and either
// returns a configuration that validates or an *Error.
func FuzzLoad(f *testing.F) {
	f.Add("[proxy]\nport = 8788\nidle_exit = \"15m\"\n[noreread]\nenabled = false\n")
	f.Add("proxy.port = 70000\n")
	f.Add("[proxy\n")
	f.Add("[foo]\nx = 1\n")
	f.Add("[[proxy]]\nport = 1\n")
	f.Add("[proxy]\nupstream = \"http://[::1]:80\"\ncount_tokens = \"no\"\n")
	f.Add("a = { b = [1, 2.5, \"x\", 1979-05-27T07:32:00Z] }\n")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, src string) {
		path := filepath.Join(dir, "config.toml")
		if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		l, err := Load(path, env(nil))
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error is %T, not *Error: %v", err, err)
			}
			if ce.Msg == "" {
				t.Fatalf("empty message: %#v", ce)
			}
			return
		}
		if err := l.Validate(); err != nil {
			t.Fatalf("Load returned a config that does not validate: %v", err)
		}
		if len(l.Settings) != len(Documented()) {
			t.Fatalf("%d settings, %d documented keys", len(l.Settings), len(Documented()))
		}
	})
}

var updateReadme = flag.Bool("update", false, "rewrite the README's configuration table from Documented()")

// readmePath is the repository's README, which carries the configuration
// table between the markers below.
const (
	readmePath = "../../README.md"
	tableBegin = "<!-- config-table:begin -->\n"
	tableEnd   = "<!-- config-table:end -->"
	updateHint = "run: cd internal && go test ./config -run TestReadmeTable -update"
)

// docTable renders Documented() as a Markdown table.
func docTable() string {
	var b strings.Builder
	b.WriteString("| key | environment | default | what it does |\n| --- | --- | --- | --- |\n")
	for _, s := range Documented() {
		v := s.Value
		if v == "" {
			v = `""`
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | `%s` | %s |\n", s.Key, s.Env, v, strings.ReplaceAll(s.Doc, "|", `\|`))
	}
	return b.String()
}

// TestReadmeTable keeps the README's configuration table equal to
// Documented(): every key, its variable, default and documentation. With
// -update it rewrites the table between the README's markers.
func TestReadmeTable(t *testing.T) {
	table := docTable()
	assert.Equal(t, len(Documented())+2, strings.Count(table, "\n"))
	raw, err := os.ReadFile(readmePath)
	require.NoError(t, err)
	readme := string(raw)
	i := strings.Index(readme, tableBegin)
	j := strings.Index(readme, tableEnd)
	require.True(t, i >= 0 && j > i, "README.md has no %q … %q markers", tableBegin, tableEnd)
	got := readme[i+len(tableBegin) : j]
	if *updateReadme {
		readme = readme[:i+len(tableBegin)] + table + readme[j:]
		require.NoError(t, os.WriteFile(readmePath, []byte(readme), 0o644))
		return
	}
	assert.Equal(t, table, got, "README.md's configuration table differs from config.Documented(); "+updateHint)
}

// FuzzEnv sets arbitrary environment values: Load never panics, and either
// returns a configuration that validates or an *Error naming the key.
func FuzzEnv(f *testing.F) {
	f.Add("8080", "15m", "true", "auto", "1")
	f.Add("-1", "soon", "maybe", "pink", "x")
	f.Add("99999999999999999999", "-5m", "0", "", "")
	path := filepath.Join(f.TempDir(), "none.toml")
	f.Fuzz(func(t *testing.T, port, idle, enabled, color, alias string) {
		l, err := Load(path, env(map[string]string{
			"SYNAXI_PROXY_PORT":       port,
			"SYNAXI_PROXY_IDLE_EXIT":  idle,
			"SYNAXI_NOREREAD_ENABLED": enabled,
			"SYNAXI_STATUSLINE_COLOR": color,
			"SYNAXI_PROJECT_ALL":      alias,
		}))
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) || ce.Key == "" {
				t.Fatalf("error without a key: %v", err)
			}
			return
		}
		if err := l.Validate(); err != nil {
			t.Fatalf("Load returned a config that does not validate: %v", err)
		}
	})
}
