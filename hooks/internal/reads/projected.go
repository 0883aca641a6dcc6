package reads

import (
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/synaxi/synaxi/internal/hookio"
	"github.com/synaxi/synaxi/internal/proxyinfo"
	"github.com/synaxi/synaxi/internal/visibility"
)

// Worker is the name of synaxi's projected subagent; hooks see it as
// "synaxi:synaxi-worker" (a plugin agent) or bare (an agent defined
// elsewhere under the same name).
const Worker = "synaxi-worker"

// projected reports whether the context of in may be projected by synaxi's
// proxy, so that what Claude Code's transcript holds is not what the model
// sees: the context is one the proxy projects (the worker, or every context
// with proxy.scope = "all") and its traffic goes through synaxi's proxy.
//
// Routing is known from ANTHROPIC_BASE_URL in the hook's own environment
// (Claude Code passes its environment to hooks, the settings' env included,
// which is how `synaxi install` and `synaxi wrap` route) when it points at
// synaxi's proxy (proxyinfo.RoutedPort: proxy.port, or the port the proxy
// recorded in the state directory; a loopback gateway that is not synaxi's
// projects nothing), from a proxy on another machine the hook asks for
// visibility (remoteURL), or from a visibility export of this session in
// the hook's state directory. Every check reads a small file at most: the
// hook asks nothing over the network here.
//
// The worker is only ever projected by synaxi, so for it any loopback base
// URL counts, and so does an export of any context of its session: a proxy
// keeping its state under another XDG_STATE_HOME records its port where the
// hook cannot read it, and taking such a worker for unprojected would deny
// re-reads of content the projection dropped. Every other context (with
// proxy.scope = "all") counts only through synaxi's own port or an export
// of that very context, so a session that talks straight to a loopback
// gateway, or whose worker alone was exported, keeps the plain rule.
func (s *Store) projected(in *hookio.Input) bool {
	worker := isWorker(in.AgentType)
	if !s.ProjectAll && !worker {
		return false
	}
	if _, ok := proxyinfo.RoutedPort(s.Dirs, s.BaseURL, s.ProxyPort); ok || s.remoteURL() != "" {
		return true
	}
	if !worker {
		_, err := os.Stat(visibility.Path(s.Dirs, in.SessionID, in.AgentID))
		return err == nil
	}
	if loopback(s.BaseURL) {
		return true
	}
	exports, _ := filepath.Glob(filepath.Join(s.Dirs.StatePath("visibility"), visibility.SessionPrefix(in.SessionID)+"*"))
	return len(exports) > 0
}

func isWorker(agentType string) bool {
	return agentType == Worker || strings.HasSuffix(agentType, ":"+Worker)
}

// loopback reports a base URL on this machine: a proxy there is never
// asked for visibility over HTTP (its exports are local files).
func loopback(baseURL string) bool {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil || u.Host == "" {
		return false
	}
	if u.Hostname() == "localhost" {
		return true
	}
	// net/netip, not net: importing net would link the cgo resolver and make
	// the hook a dynamically linked binary that pays for ld.so on every call.
	ip, err := netip.ParseAddr(u.Hostname())
	return err == nil && ip.IsLoopback()
}

// shown reports whether the model can still see the requested lines as far
// as the proxy's visibility export of the context tells.
//
// In a projected context the hook denies only on the export's positive
// word: the export exists, was written after the read reached the model
// (an export from before it knows nothing of it: stale, or from a proxy
// that no longer writes here), and lists the file as visible over every
// requested line. A missing, unreadable or stale export allows the read.
//
// In any other context Claude Code's own transcript is what the model
// sees, so only an export's explicit word (evicted, or visible ranges that
// do not cover the request, or a later export not listing the file) allows
// the read.
func shown(vis *visibility.Export, projected bool, path string, want []span, readAt time.Time) bool {
	if !projected {
		return !evicted(vis, path, want, readAt)
	}
	if vis == nil || !vis.Updated.After(readAt) {
		return false
	}
	f, ok := vis.Files[path]
	return ok && !f.Evicted && len(f.Visible) > 0 && covers(f.Visible, want)
}

// evicted reports whether the proxy's export says the model cannot see the
// requested lines: the file is marked evicted, its visible ranges do not
// cover them, or a projection served after the read does not list it.
func evicted(vis *visibility.Export, path string, want []span, readAt time.Time) bool {
	if vis == nil {
		return false
	}
	f, ok := vis.Files[path]
	if !ok {
		return vis.Updated.After(readAt)
	}
	if f.Evicted {
		return true
	}
	return len(f.Visible) > 0 && !covers(f.Visible, want)
}

// covers reports whether visible ranges (an end of 0 meaning "to the end of
// the file") hold every requested line.
func covers(visible []visibility.Range, want []span) bool {
	var have []span
	for _, r := range visible {
		have = append(have, span{r.Start, r.End})
	}
	n := 0
	for _, w := range want {
		n = max(n, w[1])
	}
	return covered(want, clampSpans(have, n))
}
