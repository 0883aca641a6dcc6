package projection

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/proxyd/internal/projection/validate"
)

func capturedBody(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "e2e", "testdata", "captured", name+".body.json"))
	require.NoError(t, err)
	return b
}

func TestCapturedBodiesProjectValid(t *testing.T) {
	for _, name := range []string{"main-first", "main-tools", "main-write", "worker-first", "worker-thinking", "system-prompt-flag", "interactive-tools"} {
		t.Run(name, func(t *testing.T) {
			body := capturedBody(t, name)
			require.NoError(t, validate.Request(body), "the client's own request")
			r, err := New(Config{AlwaysEngage: true}).ProjectBody(context.Background(), body, "")
			require.NoError(t, err)
			require.NoError(t, validate.Request(r.Body), string(r.Body))
			r2, err := New(Config{AlwaysEngage: true}).ProjectBody(context.Background(), body, "")
			require.NoError(t, err)
			require.Equal(t, string(r.Body), string(r2.Body))
		})
	}
}
