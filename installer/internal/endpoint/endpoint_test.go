package endpoint

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/installer/internal/settings"
)

func doc(t *testing.T, src string) *settings.Doc {
	t.Helper()
	d, err := settings.Parse("settings.json", []byte(src))
	require.NoError(t, err)
	return d
}

func TestRead(t *testing.T) {
	shell := map[string]string{
		"ANTHROPIC_BASE_URL":       "https://shell.example",
		"ANTHROPIC_API_KEY":        "sk-shell-secret",
		"ANTHROPIC_CUSTOM_HEADERS": "X-A: 1\nX-B: two words\n",
	}
	tests := []struct {
		name          string
		managed, user string
		shell         map[string]string
		base          Value
		cloud         string
		creds         []string
	}{
		{name: "nothing set: the Anthropic API", base: Value{Name: "ANTHROPIC_BASE_URL"}},
		{name: "the shell", shell: shell,
			base:  Value{"ANTHROPIC_BASE_URL", "https://shell.example", "shell environment"},
			creds: []string{"ANTHROPIC_API_KEY (shell environment)", "ANTHROPIC_CUSTOM_HEADERS X-A, X-B (shell environment)"}},
		{name: "settings env wins over the shell", shell: shell,
			user: `{"apiKeyHelper":"~/bin/key","env":{"ANTHROPIC_BASE_URL":"https://settings.example","ANTHROPIC_AUTH_TOKEN":"tok"}}`,
			base: Value{"ANTHROPIC_BASE_URL", "https://settings.example", "settings env"},
			creds: []string{"ANTHROPIC_AUTH_TOKEN (settings env)", "ANTHROPIC_API_KEY (shell environment)", "apiKeyHelper (settings)",
				"ANTHROPIC_CUSTOM_HEADERS X-A, X-B (shell environment)"}},
		{name: "managed settings win over both", shell: shell,
			managed: `{"env":{"ANTHROPIC_BASE_URL":"https://managed.example"}}`,
			user:    `{"env":{"ANTHROPIC_BASE_URL":"https://settings.example"}}`,
			base:    Value{"ANTHROPIC_BASE_URL", "https://managed.example", "managed settings env"},
			creds:   []string{"ANTHROPIC_API_KEY (shell environment)", "ANTHROPIC_CUSTOM_HEADERS X-A, X-B (shell environment)"}},
		{name: "Bedrock from the shell", shell: map[string]string{"CLAUDE_CODE_USE_BEDROCK": "1"},
			base: Value{Name: "ANTHROPIC_BASE_URL"}, cloud: "CLAUDE_CODE_USE_BEDROCK"},
		{name: "Vertex from settings, true", user: `{"env":{"CLAUDE_CODE_USE_VERTEX":"true"}}`,
			base: Value{Name: "ANTHROPIC_BASE_URL"}, cloud: "CLAUDE_CODE_USE_VERTEX"},
		{name: "a switch set to 0 is off", shell: map[string]string{"CLAUDE_CODE_USE_FOUNDRY": "0"},
			base: Value{Name: "ANTHROPIC_BASE_URL"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Sources{Getenv: func(k string) string { return tt.shell[k] }}
			if tt.managed != "" {
				s.Managed = doc(t, tt.managed)
			}
			if tt.user != "" {
				s.User = doc(t, tt.user)
			}
			e := Read(s)
			assert.Equal(t, tt.base, e.BaseURL)
			assert.Equal(t, tt.cloud, e.Cloud.Name)
			assert.Equal(t, tt.creds, e.Credentials)
			why, fix := e.NotRoutable()
			assert.Equal(t, tt.cloud != "", why != "")
			assert.Equal(t, why != "", fix != "")
			for _, c := range e.Credentials {
				assert.NotContains(t, c, "secret", "names, never values")
				assert.NotContains(t, c, "two words")
			}
		})
	}
}

func TestLoopback(t *testing.T) {
	for base, want := range map[string]bool{
		"http://127.0.0.1:8787": true, "http://localhost:1": true, "http://[::1]:2": true,
		"https://gateway.example": false, "::": false,
	} {
		assert.Equal(t, want, Loopback(base), base)
	}
}
