package wrap

import (
	"fmt"
	"strings"

	"github.com/synaxi/synaxi/installer/internal/claude"
	"github.com/synaxi/synaxi/installer/internal/endpoint"
	"github.com/synaxi/synaxi/installer/internal/proxyctl"
	"github.com/synaxi/synaxi/installer/internal/settings"
	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/hint"
	"github.com/synaxi/synaxi/internal/xdg"
)

// checkEndpoint refuses a launch the proxy would not serve as the user
// meant: one whose client calls a cloud's own API (the proxy would never
// see it), or one whose endpoint is a gateway other than the proxy's
// upstream (its traffic and credentials would go somewhere else).
func checkEndpoint(d xdg.Dirs, env []string) error {
	getenv := func(k string) string { return lookup(env, k) }
	user, err := settings.Read(claude.SettingsPath(xdg.ClaudeDir(getenv)))
	if err != nil {
		user = nil // doctor reports a broken settings file; the launch reads its env alone
	}
	ep := endpoint.Read(endpoint.Sources{Managed: endpoint.ReadManaged(endpoint.ManagedPath()), User: user, Getenv: getenv})
	if why, fix := ep.NotRoutable(); why != "" {
		return hint.New(why, strings.Replace(fix, "run `synaxi install --route` again", "wrap again", 1), "or run claude directly, without the wrap")
	}
	base := ep.BaseURL.Value
	if base == "" || proxyctl.IsProxy(d, base) {
		return nil // the Anthropic API, or already synaxi's proxy
	}
	l, err := config.Load(d.ConfigFile(), getenv)
	if err != nil {
		return hint.Wrap(err, "fix the configuration (`synaxi doctor` shows it)")
	}
	if up := l.Proxy.Upstream; strings.TrimRight(up, "/") != strings.TrimRight(base, "/") {
		return hint.New(fmt.Sprintf("not wrapping: this launch talks to %s (ANTHROPIC_BASE_URL, %s), but the proxy forwards to %s, so its requests and credentials would go elsewhere", base, ep.BaseURL.From, proxyctl.Redact(up)),
			fmt.Sprintf("set proxy.upstream = %q in %s (`synaxi install --route` does it for you), then wrap again", base, d.ConfigFile()))
	}
	return nil
}

// ParseScope checks a launch's scope (--scope, SYNAXI_SCOPE); "" keeps the
// proxy's proxy.scope.
func ParseScope(s string) (string, error) {
	switch s = strings.ToLower(strings.TrimSpace(s)); s {
	case "", config.ScopeAll, config.ScopeWorker, config.ScopeOff:
		return s, nil
	}
	return "", hint.New(fmt.Sprintf("scope %q is not all, worker or off", s), "--scope all|worker|off, or unset "+proxyctl.ScopeEnv)
}

// WithScope is env with the launch's scope added to ANTHROPIC_CUSTOM_HEADERS
// as X-Synaxi-Scope (the proxy removes it before forwarding), after the
// user's own custom headers; "" leaves env as it is.
func WithScope(env []string, scope string) []string {
	if scope == "" {
		return env
	}
	headers := proxyctl.ScopeHeader + ": " + scope
	if cur := lookup(env, "ANTHROPIC_CUSTOM_HEADERS"); cur != "" {
		headers = strings.TrimRight(cur, "\n") + "\n" + headers
	}
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k != "ANTHROPIC_CUSTOM_HEADERS" {
			out = append(out, kv)
		}
	}
	return append(out, "ANTHROPIC_CUSTOM_HEADERS="+headers)
}
