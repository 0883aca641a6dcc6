package statusline

import (
	"errors"
	"syscall"

	"github.com/synaxi/synaxi/internal/ledger"
	"github.com/synaxi/synaxi/internal/proxyinfo"
	"github.com/synaxi/synaxi/internal/xdg"
)

// ProbeProxy tells the proxy's state without talking to it (a status line
// must not block): routed when the session's base URL is synaxi's loopback
// port or the proxy already recorded requests for the session; down when
// routed but no live process owns the proxy record.
func ProbeProxy(d xdg.Dirs, routedByEnv bool, s *ledger.Summary) Proxy {
	if !routedByEnv && (s == nil || s.Requests == 0) {
		return NotRouted
	}
	info, err := proxyinfo.Read(d)
	if err != nil || !pidAlive(info.PID) {
		return Down
	}
	return Routed
}

func pidAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
