package replay

import (
	"fmt"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/proxyd/internal/gate"
)

// The gate's scopes, as the proxy's configuration names them.
const (
	ScopeAll    = "all"    // every Messages conversation: main sessions and subagents
	ScopeWorker = "worker" // only the synaxi-worker's requests
	ScopeOff    = "off"    // nothing
)

// DefaultScope is the scope the proxy projects with when nothing is
// configured (internal/config's defaults).
func DefaultScope() string {
	p := config.Default().Proxy
	switch {
	case p.DisableProjection:
		return ScopeOff
	case p.ProjectAll:
		return ScopeAll
	}
	return ScopeWorker
}

// ScopeRule is the gate's rule for a scope, the one the proxy builds from
// the same setting.
func ScopeRule(scope string) (gate.Rule, error) {
	switch scope {
	case ScopeAll:
		return gate.Rule{ProjectAll: true}, nil
	case ScopeWorker:
		return gate.Rule{}, nil
	case ScopeOff:
		return gate.Rule{Disable: true}, nil
	}
	return gate.Rule{}, fmt.Errorf("scope %q: use %s, %s or %s", scope, ScopeAll, ScopeWorker, ScopeOff)
}
