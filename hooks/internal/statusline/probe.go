package statusline

import (
	"github.com/synaxi/synaxi/internal/ledger"
	"github.com/synaxi/synaxi/internal/proxyinfo"
	"github.com/synaxi/synaxi/internal/xdg"
)

// ProbeProxy tells the proxy's state without talking to it (a status line
// must not block): routed when the session's base URL is synaxi's loopback
// port or the proxy already recorded requests for the session; down when
// routed but proxyinfo.Live finds no live proxy.
func ProbeProxy(d xdg.Dirs, routedByEnv bool, s *ledger.Summary) Proxy {
	if !routedByEnv && (s == nil || s.Requests == 0) {
		return NotRouted
	}
	if _, err := proxyinfo.Live(d); err != nil {
		return Down
	}
	return Routed
}
