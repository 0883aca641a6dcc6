package gate

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/synaxi/synaxi/internal/config"
)

// A launch's X-Synaxi-Scope wins over proxy.scope for its requests; a value
// that is not a scope is ignored.
func TestScopeHeader(t *testing.T) {
	main := Parse([]byte(`{"model":"m","tools":[{"name":"Read"}],"max_tokens":32000,"messages":[{"role":"user","content":"hi"}]}`))
	worker := Parse([]byte(`{"system":"SYNAXI-PROJECTION-WORKER","messages":[]}`))
	tests := []struct {
		configured, header string
		body               *Body
		gated              bool
	}{
		{config.ScopeAll, "", main, true},
		{config.ScopeAll, "off", main, false},
		{config.ScopeAll, "OFF ", main, false},
		{config.ScopeAll, "worker", main, false},
		{config.ScopeAll, "worker", worker, true},
		{config.ScopeOff, "all", main, true},
		{config.ScopeWorker, "all", main, true},
		{config.ScopeWorker, "everything", main, false},
		{config.ScopeOff, "bogus", worker, false},
	}
	for _, tt := range tests {
		h := http.Header{}
		if tt.header != "" {
			h.Set(ScopeHeader, tt.header)
		}
		d := Rule{tt.configured}.Decide("POST", "/v1/messages", h, tt.body)
		assert.Equal(t, tt.gated, d.Gated, "proxy.scope %s, header %q", tt.configured, tt.header)
	}
}
