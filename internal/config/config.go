// Package config loads synaxi's configuration: documented defaults, then
// $XDG_CONFIG_HOME/synaxi/config.toml, then SYNAXI_* environment variables.
// Command-line flags, applied by each binary, win over all three.
//
// Every key lives in a section ("[proxy]", "[noreread]", …) and is
// overridable by SYNAXI_<SECTION>_<KEY> in upper case, for example
// SYNAXI_PROXY_UPSTREAM or SYNAXI_NOREREAD_MIN_TOKENS. Load records where each
// effective value came from, so `synaxi doctor` can print it.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/synaxi/synaxi/internal/xdg"
)

// Config is synaxi's whole configuration. The `doc` tag of every key is the
// documentation `synaxi doctor` and the README show.
type Config struct {
	Proxy      Proxy      `toml:"proxy"`
	Projection Projection `toml:"projection"`
	NoReread   NoReread   `toml:"noreread"`
	Governor   Governor   `toml:"governor"`
	StatusLine StatusLine `toml:"statusline"`
	Guidance   Guidance   `toml:"guidance"`
	Ingest     Ingest     `toml:"ingest"`
	Learning   Learning   `toml:"learning"`
}

// Proxy configures synaxi-proxyd.
type Proxy struct {
	Port             int      `toml:"port" doc:"loopback port of the proxy; 0 picks a free port once and records it in the state dir"`
	Upstream         string   `toml:"upstream" doc:"base URL requests are forwarded to (Anthropic API or an Anthropic-compatible endpoint such as Ollama)"`
	UpstreamModel    string   `toml:"upstream_model" doc:"if set, the model name every forwarded /v1/messages request is rewritten to (for Ollama and other compatible endpoints)"`
	CountTokens      bool     `toml:"count_tokens" doc:"measure savings with the upstream's /v1/messages/count_tokens; turn off for endpoints without it (rows then record null with the reason)"`
	IdleExit         Duration `toml:"idle_exit" doc:"stop a detached proxy after this long without requests; 0 never stops"`
	ProbeTimeout     Duration `toml:"probe_timeout" doc:"how long the count_tokens probe of a gated request may take before its ledger row records null with the reason"`
	Scope            string   `toml:"scope" doc:"which routed requests are handed to the projection engine: all (the main session and every subagent; the engine projects where its cost model predicts a saving; side requests such as title generation pass as sent), worker (only the synaxi-worker agent's) or off (none: forward only); aliases SYNAXI_PROJECT_ALL=1 (all, 0: worker) and SYNAXI_DISABLE_PROJECTION=1 (off)"`
	LogConversations bool     `toml:"log_conversations" doc:"write a JSONL conversation log (request summaries and projection metadata, never credentials) to the state dir"`
	LogMaxBytes      int64    `toml:"log_max_bytes" doc:"size at which the conversation log is rotated (rounded up to whole MiB)"`
	TokenFile        string   `toml:"token_file" doc:"file holding the team token (at least 16 characters) every request must carry in the X-Synaxi-Token header, which clients send with ANTHROPIC_CUSTOM_HEADERS; required to listen beyond loopback; empty: no token"`
	TLSCert          string   `toml:"tls_cert" doc:"PEM certificate file; with tls_key the proxy serves HTTPS"`
	TLSKey           string   `toml:"tls_key" doc:"PEM private key file of tls_cert"`
	OTLPEndpoint     string   `toml:"otlp_endpoint" doc:"if set, metrics are also pushed over OTLP/HTTP to this URL (e.g. http://collector:4318); OTEL_EXPORTER_OTLP_* variables configure the rest"`
	Replica          string   `toml:"replica" doc:"this replica's name in the replica label of every metric; empty: the host name"`
	VisibilityStore  string   `toml:"visibility_store" doc:"redis://host:6379/0 (or rediss://) where a team's replicas share the no-reread hook's visibility exports, so any replica answers /synaxi/v1/visibility; empty: each proxy's own state dir"`
}

// Projection configures the worker's context projection.
type Projection struct {
	BudgetTokens    int  `toml:"budget_tokens" doc:"pins the world budget in tokens of the worker's projected context; 0 follows the session's working set around 3.3% of the model's context window (6,600 tokens of 200K), between 0.2 and 1.6 times that"`
	ThresholdTokens int  `toml:"threshold_tokens" doc:"how many tokens the tail must grow before a re-projection is considered (when and how much to re-project is then decided by its predicted billed cost); 0 means 30% of the budget"`
	TrimTools       bool `toml:"trim_tools" doc:"leave out the tools outside the core set (Read, Write, Edit, Bash, Grep, Glob, …) that the conversation has never called; a tool once called stays"`
	StubTools       bool `toml:"stub_tools" doc:"serve the tools outside the core set that the conversation has never called as short stubs (name, first sentence, schema without descriptions); a call restores the full schema from the next request on"`
}

// NoReread configures the no-reread hook.
type NoReread struct {
	Enabled       bool   `toml:"enabled" doc:"deny re-reads of unchanged files that are still in the agent's context"`
	MinTokens     int    `toml:"min_tokens" doc:"a re-read smaller than this many tokens is always allowed"`
	LoopThreshold int    `toml:"loop_threshold" doc:"an identical command repeated this many times with no edit between is denied on alternate attempts; 0 disables the loop breaker"`
	VisibilityURL string `toml:"visibility_url" doc:"base URL of a synaxi-proxyd on another machine to ask for the context's visibility (150 ms, any failure allows the read); empty: the local exports, or ANTHROPIC_BASE_URL when it is not loopback and ANTHROPIC_CUSTOM_HEADERS carries X-Synaxi-Token"`
}

// Governor configures the loop governor (docs/governor.md).
type Governor struct {
	Mode string `toml:"mode" doc:"off, advise (tell the agent once when it loops: the same failing command or read again, an edit undone, output unchanged across edits) or on (also stop the session with the reason shown)"`
}

// Governor modes.
const (
	GovernorOff    = "off"
	GovernorAdvise = "advise"
	GovernorOn     = "on"
)

// StatusLine configures synaxi-statusline.
type StatusLine struct {
	PreviousCommand string `toml:"previous_command" doc:"the user's own status line command; its line is printed before synaxi's"`
	Color           string `toml:"color" doc:"auto, always or never (NO_COLOR is honoured with auto)"`
}

// Guidance configures how learned guidance is published (docs/ingest.md).
type Guidance struct {
	SessionStart bool     `toml:"session_start" doc:"give each new Claude Code session the guidance learned for its project as SessionStart additional context"`
	MaxChars     int      `toml:"max_chars" doc:"cap, in characters, of the SessionStart guidance (500 to 9500; Claude Code moves hook output over 10000 into a file)"`
	Writers      string   `toml:"writers" doc:"comma-separated opt-in writers that keep a marked section in the project's agents,cursor,copilot,gemini files (AGENTS.md, .cursor/rules/synaxi.mdc, .github/copilot-instructions.md, .gemini/styleguide.md); empty writes no file"`
	Renderer     string   `toml:"renderer" doc:"deterministic, or model to have an OpenAI-compatible endpoint rephrase the guidance (used only if every item cites real profile entries)"`
	ModelURL     string   `toml:"model_url" doc:"base URL of the OpenAI-compatible endpoint of the model renderer, e.g. http://127.0.0.1:11434/v1"`
	Model        string   `toml:"model" doc:"model name the model renderer asks for"`
	ModelKeyEnv  string   `toml:"model_key_env" doc:"name of the environment variable holding the model renderer's API key (sent as a bearer token); the key itself is never stored in config"`
	ModelTimeout Duration `toml:"model_timeout" doc:"how long one model rendering may take before the deterministic text is used"`
}

// GuidanceWriters are the writer names guidance.writers accepts.
var GuidanceWriters = []string{"agents", "cursor", "copilot", "gemini"}

// Ingest configures the SessionEnd learning loop (synaxi-ingest).
type Ingest struct {
	Enabled         bool     `toml:"enabled" doc:"queue every finished session for learning (the SessionEnd hook); false makes the hook do nothing"`
	Extractor       string   `toml:"extractor" doc:"embedded (rules, no network), claude (your claude CLI in bare mode, no tools, no hooks), anthropic (the Messages API) or openai (an Ollama/OpenAI-compatible chat endpoint)"`
	Model           string   `toml:"model" doc:"model for the claude, anthropic and openai extractors; empty picks haiku for claude and anthropic, llama3.1 for openai"`
	Endpoint        string   `toml:"endpoint" doc:"base URL for the anthropic and openai extractors; empty means https://api.anthropic.com or http://127.0.0.1:11434/v1 (Ollama)"`
	APIKeyEnv       string   `toml:"api_key_env" doc:"name of the environment variable holding the extractor's API key (never the key itself); empty means ANTHROPIC_API_KEY or OPENAI_API_KEY"`
	ClaudeCommand   string   `toml:"claude_command" doc:"the claude CLI the claude extractor runs"`
	Timeout         Duration `toml:"timeout" doc:"how long one model extraction may take"`
	MaxTries        int      `toml:"max_tries" doc:"attempts at a session before it goes to the dead-letter list shown by synaxi status"`
	RetryBackoff    Duration `toml:"retry_backoff" doc:"wait before the first retry; each later retry waits four times longer"`
	MaxTranscriptMB int      `toml:"max_transcript_mb" doc:"transcripts larger than this many MiB are refused with an error in the dead-letter list"`
	MaxTokens       int      `toml:"max_tokens" doc:"hard cap on the tokens one session may cost a model extractor, prompt and answer together (1000 to 200000); the oldest typed turns are left out to fit"`
}

// Learning configures what the learning loop may publish without asking.
type Learning struct {
	Publish string `toml:"publish" doc:"accept: a learned rule reaches coding agents only after you accept it (synaxi profile review, or /synaxi:review); reinforced: also once your own typed words in two sessions support a project rule (never a global or flagged one)"`
}

// Publication policies of learning.publish.
const (
	PublishAccept     = "accept"
	PublishReinforced = "reinforced"
)

// Values of proxy.scope.
const (
	ScopeAll    = "all"
	ScopeWorker = "worker"
	ScopeOff    = "off"
)

// Default returns the documented defaults.
func Default() Config {
	return Config{
		Proxy: Proxy{
			Scope:        ScopeAll,
			Upstream:     "https://api.anthropic.com",
			CountTokens:  true,
			IdleExit:     Duration(0),
			ProbeTimeout: Duration(60 * time.Second),
			LogMaxBytes:  16 << 20,
		},
		NoReread: NoReread{
			Enabled:       true,
			MinTokens:     150,
			LoopThreshold: 3,
		},
		Projection: Projection{StubTools: true},
		Governor:   Governor{Mode: GovernorAdvise},
		StatusLine: StatusLine{Color: "auto"},
		Guidance: Guidance{
			SessionStart: true,
			MaxChars:     6000,
			Renderer:     "deterministic",
			ModelTimeout: Duration(60 * time.Second),
		},
		Ingest: Ingest{
			Enabled:         true,
			Extractor:       "embedded",
			ClaudeCommand:   "claude",
			Timeout:         Duration(120 * time.Second),
			MaxTries:        5,
			RetryBackoff:    Duration(30 * time.Second),
			MaxTranscriptMB: 128,
			MaxTokens:       16000,
		},
		Learning: Learning{Publish: PublishAccept},
	}
}

// Source says where an effective value came from.
type Source string

const (
	FromDefault Source = "default"
	FromFile    Source = "file"
	FromEnv     Source = "env"
)

// Setting is one key with its effective value, documentation and origin.
type Setting struct {
	Key    string // "proxy.upstream"
	Env    string // "SYNAXI_PROXY_UPSTREAM"
	Value  string
	Doc    string
	Source Source
	Origin string // file path and line, or the environment variable's name
}

// Loaded is a configuration together with where each value came from.
type Loaded struct {
	Config
	Path     string
	Settings []Setting // sorted by Key
}

// alias is a short environment name docs/state.md documents for a key: value
// turns its value into one of the key's, or "" to leave the key alone.
type alias struct {
	name, key string
	value     func(string) (string, error)
}

// aliases are tried in order; the first that sets its key wins, and the
// key's own variable wins over all of them.
var aliases = []alias{
	{"SYNAXI_DISABLE_PROJECTION", "proxy.scope", boolAlias(ScopeOff, "")},
	{"SYNAXI_PROJECT_ALL", "proxy.scope", boolAlias(ScopeAll, ScopeWorker)},
}

// boolAlias reads a boolean alias as yes or no.
func boolAlias(yes, no string) func(string) (string, error) {
	return func(s string) (string, error) {
		b, err := strconv.ParseBool(strings.TrimSpace(s))
		if err != nil {
			return "", fmt.Errorf("not a boolean (true/false/1/0): %q", s)
		}
		if b {
			return yes, nil
		}
		return no, nil
	}
}

// retired are keys that were replaced, with what to write instead.
var retired = map[string]string{
	"proxy.project_all":        `replaced by scope: write scope = "all" (or "worker")`,
	"proxy.disable_projection": `replaced by scope: write scope = "off"`,
}

// Error is a configuration problem tied to a key and, for the file, a line.
type Error struct {
	Path string // config file, or "" for the environment
	Line int    // 1-based; 0 if unknown
	Key  string
	Msg  string
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Path != "" {
		b.WriteString(e.Path)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d", e.Line)
		}
		b.WriteString(": ")
	}
	if e.Key != "" {
		b.WriteString(e.Key)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Load reads the file at path (a missing file is fine) and the environment.
// getenv is os.Getenv in production and a map in tests.
func Load(path string, getenv func(string) string) (*Loaded, error) {
	l := &Loaded{Config: Default(), Path: path}
	src, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read config %s: %w", path, err)
	}
	fromFile := map[string]bool{}
	if err == nil {
		md, err := toml.Decode(string(src), &l.Config)
		if err != nil {
			return nil, decodeError(path, src, err)
		}
		if und := md.Undecoded(); len(und) > 0 {
			key := und[0].String()
			msg := "unknown key (see `synaxi doctor` for every key)"
			if hint, ok := retired[key]; ok {
				msg = hint
			}
			return nil, &Error{Path: path, Line: lineOf(src, key), Key: key, Msg: msg}
		}
		for _, k := range md.Keys() {
			fromFile[k.String()] = true
		}
	}
	if err := applyEnv(l, path, src, fromFile, getenv); err != nil {
		return nil, err
	}
	if err := l.Validate(); err != nil {
		var ce *Error
		if errors.As(err, &ce) {
			switch s := l.Setting(ce.Key); s.Source {
			case FromFile:
				ce.Path, ce.Line = path, lineOf(src, ce.Key)
			case FromEnv:
				ce.Msg = fmt.Sprintf("environment %s: %s", s.Origin, ce.Msg)
			}
		}
		return nil, err
	}
	return l, nil
}

// LoadDirs is the configuration a binary runs with: Load of the config file
// in d and the environment getenv reads (os.Getenv in main, a map in tests).
// When that fails it returns the defaults together with the error, so every
// caller decides in one visible line whether a bad configuration stops it
// (the no-reread guard, the CLI) or is reported and run past (bookkeeping
// hooks, the status line). The proxy, which also takes a --config path and
// flags, calls Load itself.
func LoadDirs(d xdg.Dirs, getenv func(string) string) (Config, error) {
	l, err := Load(d.ConfigFile(), getenv)
	if err != nil {
		return Default(), err
	}
	return l.Config, nil
}

// Setting returns the Setting of key (Source FromDefault if unknown).
func (l *Loaded) Setting(key string) Setting {
	for _, s := range l.Settings {
		if s.Key == key {
			return s
		}
	}
	return Setting{Key: key, Source: FromDefault}
}

// Validate checks every value and names the first bad key.
func (c *Config) Validate() error {
	bad := func(key, format string, a ...any) error {
		return &Error{Key: key, Msg: fmt.Sprintf(format, a...)}
	}
	switch {
	case !slices.Contains([]string{ScopeAll, ScopeWorker, ScopeOff}, c.Proxy.Scope):
		return bad("proxy.scope", "must be all, worker or off, not %q", c.Proxy.Scope)
	case c.Proxy.Port < 0 || c.Proxy.Port > 65535:
		return bad("proxy.port", "must be 0 or a port from 1 to 65535, not %d", c.Proxy.Port)
	case !validUpstream(c.Proxy.Upstream):
		return bad("proxy.upstream", "must be an http:// or https:// URL with a host, not %q", c.Proxy.Upstream)
	case c.Proxy.IdleExit < 0:
		return bad("proxy.idle_exit", "must not be negative")
	case c.Proxy.ProbeTimeout < Duration(time.Second):
		return bad("proxy.probe_timeout", "must be at least 1s, not %s", c.Proxy.ProbeTimeout.Std())
	case (c.Proxy.TLSCert == "") != (c.Proxy.TLSKey == ""):
		return bad("proxy.tls_cert", "tls_cert and tls_key go together: set both (HTTPS) or neither")
	case c.Proxy.OTLPEndpoint != "" && !validUpstream(c.Proxy.OTLPEndpoint):
		return bad("proxy.otlp_endpoint", "must be an http:// or https:// URL with a host, not %q", c.Proxy.OTLPEndpoint)
	case c.Proxy.VisibilityStore != "" && !validRedis(c.Proxy.VisibilityStore):
		return bad("proxy.visibility_store", "must be a redis:// or rediss:// URL with a host, such as redis://redis.internal:6379/0")
	case c.Proxy.LogMaxBytes < 4096:
		return bad("proxy.log_max_bytes", "must be at least 4096, not %d", c.Proxy.LogMaxBytes)
	case c.Projection.BudgetTokens != 0 && c.Projection.BudgetTokens < 4000:
		return bad("projection.budget_tokens", "must be 0 (sized to the session, see docs/projection.md) or at least 4000, not %d", c.Projection.BudgetTokens)
	case c.Projection.ThresholdTokens < 0:
		return bad("projection.threshold_tokens", "must not be negative")
	case c.NoReread.MinTokens < 0:
		return bad("noreread.min_tokens", "must not be negative")
	case c.NoReread.LoopThreshold < 0 || c.NoReread.LoopThreshold == 1:
		return bad("noreread.loop_threshold", "must be 0 (off) or at least 2, not %d", c.NoReread.LoopThreshold)
	case c.NoReread.VisibilityURL != "" && !validUpstream(c.NoReread.VisibilityURL):
		return bad("noreread.visibility_url", "must be an http:// or https:// URL with a host (the team proxy), not %q", c.NoReread.VisibilityURL)
	}
	if err := c.Guidance.validate(bad); err != nil {
		return err
	}
	switch {
	case c.Ingest.Endpoint != "" && !validUpstream(c.Ingest.Endpoint):
		return bad("ingest.endpoint", "must be an http:// or https:// URL with a host, not %q", c.Ingest.Endpoint)
	case c.Ingest.Timeout < Duration(time.Second):
		return bad("ingest.timeout", "must be at least 1s, not %s", c.Ingest.Timeout.Std())
	case c.Ingest.MaxTries < 1:
		return bad("ingest.max_tries", "must be at least 1, not %d", c.Ingest.MaxTries)
	case c.Ingest.RetryBackoff < Duration(time.Second):
		return bad("ingest.retry_backoff", "must be at least 1s, not %s", c.Ingest.RetryBackoff.Std())
	case c.Ingest.MaxTokens < 1000 || c.Ingest.MaxTokens > 200000:
		return bad("ingest.max_tokens", "must be between 1000 and 200000, not %d", c.Ingest.MaxTokens)
	case c.Ingest.MaxTranscriptMB < 1:
		return bad("ingest.max_transcript_mb", "must be at least 1, not %d", c.Ingest.MaxTranscriptMB)
	case c.Ingest.ClaudeCommand == "":
		return bad("ingest.claude_command", "must name the claude CLI (a name on PATH or a path)")
	}
	switch c.Learning.Publish {
	case PublishAccept, PublishReinforced:
	default:
		return bad("learning.publish", "must be %s or %s, not %q", PublishAccept, PublishReinforced, c.Learning.Publish)
	}
	switch c.Ingest.Extractor {
	case "embedded", "claude", "anthropic", "openai":
	default:
		return bad("ingest.extractor", "must be embedded, claude, anthropic or openai, not %q", c.Ingest.Extractor)
	}
	switch c.Governor.Mode {
	case GovernorOff, GovernorAdvise, GovernorOn:
	default:
		return bad("governor.mode", "must be off, advise or on, not %q", c.Governor.Mode)
	}
	switch c.StatusLine.Color {
	case "auto", "always", "never":
	default:
		return bad("statusline.color", "must be auto, always or never, not %q", c.StatusLine.Color)
	}
	return nil
}

func (g *Guidance) validate(bad func(key, format string, a ...any) error) error {
	switch {
	case g.MaxChars < 500 || g.MaxChars > 9500:
		return bad("guidance.max_chars", "must be from 500 to 9500, not %d", g.MaxChars)
	case g.Renderer != "deterministic" && g.Renderer != "model":
		return bad("guidance.renderer", "must be deterministic or model, not %q", g.Renderer)
	case g.Renderer == "model" && !validUpstream(g.ModelURL):
		return bad("guidance.model_url", "the model renderer needs an http:// or https:// base URL, not %q", g.ModelURL)
	case g.Renderer == "model" && strings.TrimSpace(g.Model) == "":
		return bad("guidance.model", "the model renderer needs a model name")
	case g.ModelTimeout < Duration(time.Second):
		return bad("guidance.model_timeout", "must be at least 1s, not %s", g.ModelTimeout.Std())
	}
	for _, w := range strings.Split(g.Writers, ",") {
		if w = strings.TrimSpace(w); w != "" && !slices.Contains(GuidanceWriters, w) {
			return bad("guidance.writers", "unknown writer %q (want a comma-separated list of %s)", w, strings.Join(GuidanceWriters, ", "))
		}
	}
	return nil
}

func validUpstream(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// validRedis reports a redis:// or rediss:// URL with a host.
func validRedis(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "redis" || u.Scheme == "rediss") && u.Host != ""
}

// Duration is a time.Duration written as "90s", "15m" or "0".
type Duration time.Duration

// UnmarshalText parses a Go duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	s := strings.TrimSpace(string(b))
	if s == "0" {
		*d = 0
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("not a duration like \"90s\" or \"15m\": %q", s)
	}
	*d = Duration(v)
	return nil
}

// MarshalText formats the duration.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// Std returns the time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

var durationType = reflect.TypeOf(Duration(0))

// walk calls fn for every key of c with its reflect value and documentation.
func walk(c *Config, fn func(key string, v reflect.Value, doc string) error) error {
	cv := reflect.ValueOf(c).Elem()
	ct := cv.Type()
	for i := 0; i < ct.NumField(); i++ {
		sect := ct.Field(i)
		sv := cv.Field(i)
		for j := 0; j < sect.Type.NumField(); j++ {
			f := sect.Type.Field(j)
			key := sect.Tag.Get("toml") + "." + f.Tag.Get("toml")
			if err := fn(key, sv.Field(j), f.Tag.Get("doc")); err != nil {
				return err
			}
		}
	}
	return nil
}

// EnvName is the environment variable that overrides key.
func EnvName(key string) string {
	return "SYNAXI_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

func applyEnv(l *Loaded, path string, src []byte, fromFile map[string]bool, getenv func(string) string) error {
	err := walk(&l.Config, func(key string, v reflect.Value, doc string) error {
		env := EnvName(key)
		s := Setting{Key: key, Env: env, Doc: doc, Source: FromDefault}
		if fromFile[key] {
			s.Source, s.Origin = FromFile, fmt.Sprintf("%s:%d", path, lineOf(src, key))
		}
		name, val, err := envValue(key, env, getenv)
		if err != nil {
			return &Error{Key: key, Msg: fmt.Sprintf("environment %s: %v", name, err)}
		}
		if name != "" {
			if err := setFromString(v, val); err != nil {
				return &Error{Key: key, Msg: fmt.Sprintf("environment %s: %v", name, err)}
			}
			s.Source, s.Origin = FromEnv, name
		}
		s.Value = format(v)
		l.Settings = append(l.Settings, s)
		return nil
	})
	sort.Slice(l.Settings, func(i, j int) bool { return l.Settings[i].Key < l.Settings[j].Key })
	return err
}

// envValue is the environment's value for key and the variable it came
// from: the key's own variable, else the first alias that sets it; no
// name when none does.
func envValue(key, env string, getenv func(string) string) (name, val string, err error) {
	if v := getenv(env); v != "" {
		return env, v, nil
	}
	for _, a := range aliases {
		v := getenv(a.name)
		if a.key != key || v == "" {
			continue
		}
		val, err := a.value(v)
		if err != nil {
			return a.name, "", err
		}
		if val != "" {
			return a.name, val, nil
		}
	}
	return "", "", nil
}

func setFromString(v reflect.Value, s string) error {
	s = strings.TrimSpace(s)
	if v.Type() == durationType {
		var d Duration
		if err := d.UnmarshalText([]byte(s)); err != nil {
			return err
		}
		v.Set(reflect.ValueOf(d))
		return nil
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("not a boolean (true/false/1/0): %q", s)
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int64:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return fmt.Errorf("not a whole number: %q", s)
		}
		v.SetInt(n)
	default:
		return fmt.Errorf("unsupported kind %s", v.Kind())
	}
	return nil
}

func format(v reflect.Value) string {
	if v.Type() == durationType {
		return time.Duration(v.Int()).String()
	}
	return fmt.Sprint(v.Interface())
}

// Documented lists every key with its default and documentation, for the
// README and `synaxi doctor`.
func Documented() []Setting {
	c := Default()
	var out []Setting
	_ = walk(&c, func(key string, v reflect.Value, doc string) error {
		out = append(out, Setting{Key: key, Env: EnvName(key), Value: format(v), Doc: doc, Source: FromDefault})
		return nil
	})
	return out
}

// decodeError turns a TOML error into an *Error with the line and, where
// the library knows it, the key.
func decodeError(path string, src []byte, err error) error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		e := &Error{Path: path, Line: pe.Position.Line, Msg: pe.Message}
		// An error at a line's newline ("got '\n' instead") belongs to
		// that line, which the library counts as the next.
		if p := pe.Position.Start; p > 0 && p < len(src) && src[p] == '\n' && e.Line > 1 {
			e.Line--
		}
		// LastKey is the key parsed last; it names the culprit only when it
		// sits on the line of the error (a bad value), not for a syntax
		// error further on.
		if pe.LastKey != "" && lineOf(src, pe.LastKey) == pe.Position.Line {
			e.Key = pe.LastKey
		}
		return e
	}
	// Type mismatches name the key in the message ("toml: line 3 (last key
	// "proxy.port"): incompatible types …"); keep the library's words
	// without the position, which the *Error carries.
	msg := strings.TrimPrefix(err.Error(), "toml: ")
	key := ""
	if i := strings.Index(msg, `last key "`); i >= 0 {
		rest := msg[i+len(`last key "`):]
		if j := strings.IndexByte(rest, '"'); j >= 0 {
			key = rest[:j]
			if k := strings.Index(rest[j:], "): "); k >= 0 {
				msg = rest[j+k+len("): "):]
			}
		}
	}
	return &Error{Path: path, Line: lineOf(src, key), Key: key, Msg: msg}
}

// lineOf finds the 1-based line of "key = …" inside its [section] in src,
// or of the [section] header itself when dotted names a section. It returns
// 0 when the key is not written in one of those two forms (an inline table,
// for example).
func lineOf(src []byte, dotted string) int {
	if dotted == "" {
		return 0
	}
	sect, key, ok := strings.Cut(dotted, ".")
	if !ok {
		key, sect = sect, ""
	}
	cur := ""
	for i, line := range strings.Split(string(src), "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "[") {
			h, _, _ := strings.Cut(t, "#") // a header may end with a comment
			if h = strings.TrimSpace(h); strings.HasSuffix(h, "]") {
				cur = strings.TrimSpace(strings.Trim(h, "[]"))
				if !ok && cur == dotted {
					return i + 1
				}
				continue
			}
		}
		name, _, found := strings.Cut(t, "=")
		if !found {
			continue
		}
		name = strings.Trim(strings.TrimSpace(name), `"'`)
		if name == key && cur == sect {
			return i + 1
		}
		if cur == "" && name == dotted {
			return i + 1
		}
	}
	return 0
}
