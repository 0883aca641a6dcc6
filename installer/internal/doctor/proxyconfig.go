package doctor

import (
	"context"
	"fmt"

	"github.com/synaxi/synaxi/installer/internal/proxyctl"
)

// checkProxyConfig compares the configuration the running proxy started
// with (its /health fingerprint) with the configuration as it is now, and
// names the projection scope the proxy applies and where it comes from.
func checkProxyConfig(_ context.Context, f *facts) Check {
	const name = "proxy config"
	if !f.proxy.Running || f.config == nil {
		return pass(name, "nothing to compare (no proxy running, or the config does not load)")
	}
	h := f.proxy.Health
	scope := "scope " + scopeLine(f)
	if h.Config == "" {
		return warns(name, "the running proxy (version "+h.Version+") does not report its configuration; "+scope, "synaxi proxy restart")
	}
	want := f.config.ProxyFingerprint()
	if !configChanged(f) {
		return pass(name, "the proxy runs the configuration as it is now ("+want+"); "+scope)
	}
	detail := fmt.Sprintf("the configuration changed since the proxy started: it runs %s, the configuration is now %s", h.Config, want)
	if h.Config == want { // the port alone
		detail = fmt.Sprintf("the configuration changed since the proxy started: it listens on port %d, proxy.port is %d", f.proxy.Info.Port, f.config.Proxy.Port)
	}
	if up := f.config.Proxy.Upstream; !sameUpstream(up, h.Upstream) {
		detail += fmt.Sprintf(" (upstream: running %s, configured %s)", h.Upstream, up)
	}
	return fails(name, detail+"; "+scope, "synaxi proxy restart (it replaces the proxy without dropping a request; `synaxi install` does it too)")
}

// scopeLine is the projection scope the running proxy applies, with the
// setting it comes from.
func scopeLine(f *facts) string {
	out := f.proxy.Health.Projection
	if out == "" {
		out = "unknown"
	}
	for _, key := range []string{"proxy.scope", "proxy.project_all", "proxy.disable_projection"} {
		if s := f.config.Setting(key); s.Env != "" { // a key of this build
			from := string(s.Source)
			if s.Origin != "" {
				from += " " + s.Origin
			}
			return fmt.Sprintf("%s (%s = %s, %s; one launch: synaxi wrap --scope or %s)", out, key, s.Value, from, proxyctl.ScopeEnv)
		}
	}
	return out
}

// sameUpstream compares the configured upstream with the one /health
// shows, which has a password redacted.
func sameUpstream(configured, running string) bool {
	return proxyctl.Redact(configured) == running
}

// upstreamFailing says, from a proxy's /health, that its calls to the
// upstream it really uses are failing now, and what to do; "" when they
// are not.
func upstreamFailing(h *proxyctl.Health) (why, fix string) {
	c := h.UpstreamCalls
	if !c.Failing() {
		return "", ""
	}
	why = fmt.Sprintf("its upstream %s is failing: %d call(s) in the last %d minutes got no answer, none since (last: %s)",
		h.Upstream, c.RecentFailures, c.WindowSeconds/60, c.LastError)
	fix = "make " + h.Upstream + " reachable from the proxy's host, or set proxy.upstream to the endpoint you use (the effective configuration says where it comes from), then `synaxi proxy restart`"
	return why, fix
}

// configChanged reports whether the running proxy started with another
// configuration than the one it would start with now.
func configChanged(f *facts) bool {
	if !f.proxy.Running || f.config == nil || f.proxy.Health.Config == "" {
		return false
	}
	port := f.config.Proxy.Port
	return f.proxy.Health.Config != f.config.ProxyFingerprint() || port != 0 && port != f.proxy.Info.Port
}

// proxyNotes is what `synaxi status` adds to the proxy's line when it
// needs attention: its upstream failing, its configuration out of date.
func proxyNotes(f *facts) string {
	if !f.proxy.Running {
		return ""
	}
	out := ""
	if why, _ := upstreamFailing(f.proxy.Health); why != "" {
		out += "; " + why + " (synaxi doctor)"
	}
	if configChanged(f) {
		out += "; the configuration changed since it started (synaxi proxy restart)"
	}
	return out
}
