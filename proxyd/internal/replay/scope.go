package replay

import (
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/proxyd/internal/gate"
)

// DefaultScope is the scope the proxy projects with when nothing is
// configured (config.Proxy.Scope's default).
func DefaultScope() string { return config.Default().Proxy.Scope }

// ScopeRule is the gate's rule for a scope, as the proxy builds it from
// proxy.scope: all, worker or off.
func ScopeRule(scope string) (gate.Rule, error) {
	if !slices.Contains([]string{config.ScopeAll, config.ScopeWorker, config.ScopeOff}, scope) {
		return gate.Rule{}, fmt.Errorf("scope %q: use %s, %s or %s", scope, config.ScopeAll, config.ScopeWorker, config.ScopeOff)
	}
	return gate.Rule{Scope: scope}, nil
}

// agentHeader is the header Claude Code sends with a subagent's requests,
// for a transcript in a session's subagents/ directory (agent-ID.jsonl);
// none for a main session's.
func agentHeader(path string) http.Header {
	h := http.Header{}
	if filepath.Base(filepath.Dir(path)) == "subagents" {
		h.Set(gate.AgentHeader, strings.TrimPrefix(strings.TrimSuffix(filepath.Base(path), ".jsonl"), "agent-"))
	}
	return h
}
