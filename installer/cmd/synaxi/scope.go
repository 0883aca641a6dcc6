package main

import (
	"os"

	"github.com/synaxi/synaxi/installer/internal/savings"
	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/xdg"
)

// effectiveScope is the proxy.scope routing projects under, as the
// configuration and environment set it: all, worker or off. A
// configuration that does not load is reported by doctor; the replay then
// prices as the default would.
func effectiveScope() string {
	l, err := config.Load(xdg.Resolve().ConfigFile(), os.Getenv)
	if err != nil {
		return "all"
	}
	return savings.ScopeOf(l.Config.Proxy)
}
