package redact

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestText(t *testing.T) {
	secrets := []struct{ name, in, secret string }{
		{"anthropic key", "use sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv_wx for the test", "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv_wx"},
		{"github token", "export GH=ghp_0123456789abcdefABCDEF0123456789abcd", "ghp_0123456789abcdefABCDEF0123456789abcd"},
		{"aws key", "key AKIAIOSFODNN7EXAMPLE here", "AKIAIOSFODNN7EXAMPLE"},
		{"jwt", "cookie eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "eyJhbGciOiJIUzI1NiJ9"},
		{"pem", "here:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\nok", "b3BlbnNzaC1rZXktdjEAAAAA"},
		{"truncated pem", "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA", "MIIEowIBAAKCAQEA"},
		{"url credentials", "clone https://bob:hunter2secret@example.com/repo.git", "hunter2secret"},
		{"bearer", "curl -H 'Authorization: Bearer abcdef0123456789xyz'", "abcdef0123456789xyz"},
		{"password kv", "DB_PASSWORD=s3cr3tPass!", "s3cr3tPass!"},
		{"api key kv", `api_key: "q8w7e6r5t4"`, "q8w7e6r5t4"},
		{"password is", "my password is Tr0ub4dor&3", "Tr0ub4dor"},
		{"high entropy", "the value 9fQ2xL7vB1nM4kZ8pR6tY3wC5hJ0dG is random", "9fQ2xL7vB1nM4kZ8pR6tY3wC5hJ0dG"},
	}
	for _, tt := range secrets {
		t.Run(tt.name, func(t *testing.T) {
			out := Text(tt.in)
			assert.NotContains(t, out, tt.secret)
			assert.Contains(t, out, "[REDACTED-")
			assert.Equal(t, out, Text(out), "idempotent")
		})
	}
	kept := []string{
		"no, use pnpm instead of npm",
		"never commit without signing.   use ps GPG alt",
		"commit 8cc42b0bd39d04e71e509d7d58e6782ab435329f is the base",
		"session 258c7280-ae70-4798-800f-63464d01a85d",
		"the token is expired, ask for a new one",
		"read /home/user/projects/spotter/lib/spotter/services/transcript_renderer.ex",
		"TestConcurrentUpdatesLoseNothing and BenchmarkExtractEmbedded",
		"https://example.com/path?x=1",
	}
	for _, s := range kept {
		assert.Equal(t, s, Text(s))
	}
}

func FuzzText(f *testing.F) {
	f.Add("password=hunter2hunter2 https://a:b@c/ sk-ant-xxxxxxxxxxxxxxxx")
	f.Add("-----BEGIN X-----\n")
	f.Fuzz(func(t *testing.T, s string) {
		out := Text(s)
		if Text(out) != out {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, out, Text(out))
		}
		if strings.Contains(s, "[REDACTED-") {
			return
		}
	})
}
