package doctor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/hint"
	"github.com/synaxi/synaxi/internal/xdg"
)

func TestCheckDownload(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"HOME": home}
	f := &facts{env: Env{Getenv: func(k string) string { return env[k] }},
		d: xdg.For("linux", func(k string) string { return env[k] }), cdir: filepath.Join(home, ".claude")}
	bin := filepath.Join(home, ".claude", "plugins", "data", "synaxi-synaxi", "bin")
	require.NoError(t, os.MkdirAll(bin, 0o700))

	c := checkDownload(context.Background(), f)
	assert.True(t, c.OK(), "%+v", c)

	const sentence = "synaxi could not download its programs: the server answered HTTP 404 for http://x/a.tar.gz. It tries again after 10:01 UTC."
	require.NoError(t, os.WriteFile(filepath.Join(bin, ".0.2.0.failed"), []byte("1796290000 1 download\n"+sentence+"\n"), 0o600))
	c = checkDownload(context.Background(), f)
	assert.False(t, c.OK())
	assert.Equal(t, "download", c.Name)
	assert.Equal(t, sentence, c.Err.Error(), "the launcher's own sentence")
	assert.Contains(t, strings.Join(hint.Hints(c.Err), "\n"), "tries again by itself")

	require.NoError(t, os.WriteFile(filepath.Join(bin, ".0.2.0.failed"),
		[]byte("1796290000 1 checksum\nsynaxi refused the archive from http://x/a.tar.gz: its SHA-256 does not match checksums.txt.\n"), 0o600))
	c = checkDownload(context.Background(), f)
	assert.Contains(t, c.Err.Error(), "does not match checksums.txt")
	assert.Contains(t, strings.Join(hint.Hints(c.Err), "\n"), "claude plugin update synaxi@synaxi")

	// Installed since (another attempt, or by hand): nothing to report.
	require.NoError(t, os.MkdirAll(filepath.Join(bin, "0.2.0"), 0o700))
	c = checkDownload(context.Background(), f)
	assert.True(t, c.OK(), "%+v", c)

	// CLAUDE_PLUGIN_DATA is looked at too.
	other := t.TempDir()
	env["CLAUDE_PLUGIN_DATA"] = other
	require.NoError(t, os.MkdirAll(filepath.Join(other, "bin"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(other, "bin", ".0.3.0.failed"), []byte("1 1 download\n"+sentence+"\n"), 0o600))
	c = checkDownload(context.Background(), f)
	assert.False(t, c.OK())
}
