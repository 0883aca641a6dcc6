package savings

import (
	"fmt"
	"io"
	"time"

	"github.com/synaxi/synaxi/internal/config"
)

// ScopeOf is the projection scope a configuration sets: all, worker or off.
func ScopeOf(p config.Proxy) string {
	if p.Scope == "" {
		return config.ScopeAll
	}
	return p.Scope
}

// Route is what `synaxi savings` says about routing beside the ledger's
// figures, so it never contradicts the proxy nor tells a routed user to
// route: whether Claude Code's traffic goes through the proxy, the scope
// it projects under, and the running proxy's own counters.
type Route struct {
	Routed bool         `json:"routed"` // settings or a running wrap send Claude Code's traffic to the proxy
	Scope  string       `json:"scope"`  // the running proxy's projection scope, else the configured one
	Proxy  *ProxyCounts `json:"proxy"`  // nil: the proxy is not running
}

// ProxyCounts are the running proxy's counters (/health), since it started.
type ProxyCounts struct {
	Started   time.Time `json:"started"`
	Requests  int64     `json:"requests"`  // every forwarded request
	Messages  int64     `json:"messages"`  // of which Messages requests
	Gated     int64     `json:"gated"`     // of which gated: one ledger row each
	Projected int64     `json:"projected"` // of which projected
	FailOpens int64     `json:"fail_opens"`
}

// writeEmpty says why the ledger holds nothing yet, from what routing is.
func (r *Route) writeEmpty(w io.Writer) error {
	var err error
	switch {
	case r == nil || !r.Routed:
		_, err = fmt.Fprintln(w, "no measured requests yet: the ledger is empty (route Claude Code through the proxy with `synaxi wrap claude` or `synaxi install --route`)")
	case r.Proxy == nil:
		_, err = fmt.Fprintln(w, "no measured requests yet: Claude Code is routed through the proxy, but the proxy is not running (`synaxi doctor` says why)")
	case r.Proxy.Requests == 0:
		_, err = fmt.Fprintln(w, "no measured requests yet: Claude Code is routed through the proxy, and no session has sent a request through it since it started; start a new Claude Code session")
	default:
		_, err = fmt.Fprintf(w, "no measured requests yet: Claude Code is routed, and the proxy forwarded %d requests since %s (%d Messages requests), projecting none: %s\n",
			r.Proxy.Requests, r.Proxy.Started.Local().Format("15:04 Jan 2"), r.Proxy.Messages, whyNone(r.Scope))
	}
	return err
}

// whyNone says why a routed proxy projected nothing, by scope.
func whyNone(scope string) string {
	switch scope {
	case "off", "disabled":
		return "proxy.scope is off"
	case "worker":
		return "proxy.scope is worker, which projects only the synaxi-worker agent's requests (set proxy.scope = \"all\" for every session)"
	}
	return "no conversation has grown long enough for the projection to pay yet"
}

// writeCounts prints the proxy's own counters under the ledger's figures,
// saying which period each covers.
func (r *Route) writeCounts(w io.Writer) {
	if r == nil || r.Proxy == nil {
		return
	}
	p := r.Proxy
	fmt.Fprintf(w, "proxy, since it started at %s: %d requests forwarded (%d Messages), %d gated (one ledger row each), %d projected, %d fail-opens; the ledger above covers every session since install\n",
		p.Started.Local().Format("15:04 Jan 2"), p.Requests, p.Messages, p.Gated, p.Projected, p.FailOpens)
}
