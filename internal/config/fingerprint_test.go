package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestProxyFingerprint(t *testing.T) {
	base := Default()
	fp := base.ProxyFingerprint()
	assert.Len(t, fp, 12)
	again := Default()
	assert.Equal(t, fp, again.ProxyFingerprint(), "the same configuration, the same fingerprint")

	for name, change := range map[string]func(*Config){
		"proxy.upstream":           func(c *Config) { c.Proxy.Upstream = "https://gateway.example.com" },
		"proxy.visibility_store":   func(c *Config) { c.Proxy.VisibilityStore = "redis://:secret@redis:6379/0" },
		"projection.budget_tokens": func(c *Config) { c.Projection.BudgetTokens = 9000 },
	} {
		c := Default()
		change(&c)
		assert.NotEqual(t, fp, c.ProxyFingerprint(), name)
	}
	for name, change := range map[string]func(*Config){
		"noreread.min_tokens": func(c *Config) { c.NoReread.MinTokens = 1 },
		"statusline.color":    func(c *Config) { c.StatusLine.Color = "never" },
		"proxy.port":          func(c *Config) { c.Proxy.Port = 8787 }, // compared with the address on its own
	} {
		c := Default()
		change(&c)
		assert.Equal(t, fp, c.ProxyFingerprint(), "%s is not in the fingerprint", name)
	}
}
