package gate

import (
	"net/http"
	"strings"

	"github.com/synaxi/synaxi/internal/config"
)

// ScopeHeader carries one launch's projection scope (all, worker or off)
// over proxy.scope for that launch's requests: `synaxi wrap --scope` (or
// SYNAXI_SCOPE) adds it to the launch's ANTHROPIC_CUSTOM_HEADERS, and any
// client can send it the same way. The proxy removes it before forwarding.
const ScopeHeader = "X-Synaxi-Scope"

// For is the rule for a request with headers h: the scope it asks for in
// ScopeHeader when that is a valid scope, else r's. An unknown value is
// ignored, so a typo never turns projection on or off.
func (r Rule) For(h http.Header) Rule {
	switch v := strings.ToLower(strings.TrimSpace(h.Get(ScopeHeader))); v {
	case config.ScopeAll, config.ScopeWorker, config.ScopeOff:
		return Rule{Scope: v}
	}
	return r
}
