// Package endpoint reads where Claude Code sends its model traffic and
// with which credentials, the way Claude Code itself decides it: the
// settings files' env (managed settings over the user's) win over the
// shell's environment. `synaxi install --route` makes that endpoint the
// proxy's upstream, so routed traffic reaches the place the user chose
// with the credentials they chose; `synaxi wrap` and `synaxi doctor` use
// the same reading.
//
// Invariants:
//   - No credential value leaves this package: Endpoint names where each
//     credential comes from, and for custom headers their names only.
//   - A client that does not call a base URL with the Messages API
//     (CLAUDE_CODE_USE_BEDROCK, _VERTEX, _FOUNDRY) has Cloud set, and
//     nothing routes it.
package endpoint

import (
	"net/url"
	"os"
	"runtime"
	"strings"

	"github.com/synaxi/synaxi/installer/internal/settings"
	"github.com/synaxi/synaxi/internal/proxyinfo"
)

// Value is one variable as Claude Code would see it, and where it came
// from: "managed settings env", "settings env" (the user's settings.json)
// or "shell environment"; "" when it is set nowhere.
type Value struct {
	Name, Value, From string
}

// Endpoint is what Claude Code would use.
type Endpoint struct {
	BaseURL Value // ANTHROPIC_BASE_URL; Value "" is the Anthropic API
	// Cloud is the CLAUDE_CODE_USE_* switch that is on, if any; CloudName
	// names the cloud.
	Cloud     Value
	CloudName string
	// Credentials name what Claude Code authenticates with beyond its own
	// login, each as "NAME (where)": ANTHROPIC_AUTH_TOKEN, ANTHROPIC_API_KEY,
	// apiKeyHelper, and the header names of ANTHROPIC_CUSTOM_HEADERS.
	Credentials []string
}

// Sources are the settings Claude Code reads env from, strongest first.
type Sources struct {
	Managed *settings.Doc // nil: none
	User    *settings.Doc // nil: none
	Getenv  func(string) string
}

// ManagedPath is the system-wide managed settings file on this platform.
func ManagedPath() string {
	if runtime.GOOS == "darwin" {
		return "/Library/Application Support/ClaudeCode/managed-settings.json"
	}
	return "/etc/claude-code/managed-settings.json"
}

// ReadManaged reads the managed settings file; nil when there is none or
// it does not parse (Claude Code then ignores it too).
func ReadManaged(path string) *settings.Doc {
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	d, err := settings.Read(path)
	if err != nil {
		return nil
	}
	return d
}

// lookup is name as Claude Code sees it.
func (s Sources) lookup(name string) Value {
	if s.Managed != nil {
		if v := s.Managed.String("env", name); v != "" {
			return Value{name, v, "managed settings env"}
		}
	}
	if s.User != nil {
		if v := s.User.String("env", name); v != "" {
			return Value{name, v, "settings env"}
		}
	}
	if s.Getenv != nil {
		if v := s.Getenv(name); v != "" {
			return Value{name, v, "shell environment"}
		}
	}
	return Value{Name: name}
}

// Read is the endpoint Claude Code would use with these sources.
func Read(s Sources) Endpoint {
	e := Endpoint{BaseURL: s.lookup("ANTHROPIC_BASE_URL")}
	for _, c := range proxyinfo.Clouds {
		if v := s.lookup(c.Var); proxyinfo.On(v.Value) {
			e.Cloud, e.CloudName = v, c.Name
			break
		}
	}
	for _, name := range []string{"ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_API_KEY"} {
		if v := s.lookup(name); v.Value != "" {
			e.Credentials = append(e.Credentials, name+" ("+v.From+")")
		}
	}
	for _, d := range []struct {
		doc  *settings.Doc
		from string
	}{{s.Managed, "managed settings"}, {s.User, "settings"}} {
		if d.doc != nil && d.doc.String("apiKeyHelper") != "" {
			e.Credentials = append(e.Credentials, "apiKeyHelper ("+d.from+")")
			break
		}
	}
	if v := s.lookup("ANTHROPIC_CUSTOM_HEADERS"); v.Value != "" {
		e.Credentials = append(e.Credentials, "ANTHROPIC_CUSTOM_HEADERS "+strings.Join(HeaderNames(v.Value), ", ")+" ("+v.From+")")
	}
	return e
}

// HeaderNames are the names of ANTHROPIC_CUSTOM_HEADERS' "Name: value"
// lines, without their values.
func HeaderNames(custom string) []string {
	var names []string
	for _, line := range strings.Split(custom, "\n") {
		if name, _, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(name) != "" {
			names = append(names, strings.TrimSpace(name))
		}
	}
	return names
}

// Loopback reports whether base is an http URL on this machine, as the
// proxy's own address is.
func Loopback(base string) bool {
	u, err := url.Parse(base)
	if err != nil {
		return false
	}
	switch u.Hostname() {
	case "127.0.0.1", "localhost", "::1":
		return true
	}
	return false
}

// NotRoutable is the one sentence that says why a cloud client is not
// routed, and Fix what to do; "" when the client can be routed.
func (e Endpoint) NotRoutable() (why, fix string) {
	if e.Cloud.Name == "" {
		return "", ""
	}
	why = "not routing: " + e.Cloud.Name + " is on (" + e.Cloud.From + "), so Claude Code calls " + e.CloudName +
		"'s own API and never a base URL a proxy could listen on"
	fix = "to route, reach Claude through a gateway that speaks the Anthropic Messages API: set ANTHROPIC_BASE_URL to it, unset " +
		e.Cloud.Name + ", and run `synaxi install --route` again (hooks, the status line and learning work without routing)"
	return why, fix
}
