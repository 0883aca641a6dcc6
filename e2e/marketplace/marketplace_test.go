package marketplace_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/e2e/marketplace"
)

func get(t *testing.T, url, rng string) (int, []byte, error) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	if rng != "" {
		req.Header.Set("Range", rng)
	}
	c := &http.Client{Timeout: 3 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestReleaseServerFaults checks each fault mode against a small fake
// release, with a plain HTTP client.
func TestReleaseServerFaults(t *testing.T) {
	dir := t.TempDir()
	data := make([]byte, 100_000) // incompressible, so the archive is as large
	_, _ = rand.NewChaCha8([32]byte{1}).Read(data)
	path := filepath.Join(dir, "synaxi_1.0.0_linux_amd64.tar.gz")
	require.NoError(t, os.WriteFile(path, gz(t, data), 0o644))
	whole, err := os.ReadFile(path)
	require.NoError(t, err)
	rel := &marketplace.Release{Version: "1.0.0", Dir: dir, Archives: []marketplace.Archive{
		{Name: filepath.Base(path), Path: path, SHA256: sum(whole), Size: int64(len(whole))}}}
	s := marketplace.ServeRelease(t, rel)
	url := s.Base() + "/" + rel.Archives[0].Name

	code, body, err := get(t, url, "")
	require.NoError(t, err)
	assert.Equal(t, 200, code)
	assert.Equal(t, rel.Archives[0].SHA256, sum(body))

	code, body, err = get(t, url, "bytes=10-")
	require.NoError(t, err)
	assert.Equal(t, 206, code, "a resumed download gets the rest")
	assert.Equal(t, whole[10:], body)

	code, _, _ = get(t, s.Base()+"/nothing.tar.gz", "")
	assert.Equal(t, 404, code)

	s.SetFault(marketplace.NotFound)
	code, _, _ = get(t, url, "")
	assert.Equal(t, 404, code)

	s.SetFault(marketplace.Truncate)
	code, body, err = get(t, url, "")
	require.NoError(t, err)
	assert.Equal(t, 200, code)
	assert.Equal(t, whole[:len(whole)/2], body)

	s.SetFault(marketplace.WrongChecksum)
	code, body, err = get(t, url, "")
	require.NoError(t, err)
	assert.Equal(t, 200, code)
	assert.NotEqual(t, rel.Archives[0].SHA256, sum(body))
	assert.Equal(t, data, gunzip(t, body), "the wrong archive is still a whole, valid one")

	s.SetFault(marketplace.KillHalfway)
	_, body, err = get(t, url, "")
	assert.Error(t, err, "the connection dies before the announced length")
	assert.LessOrEqual(t, len(body), len(whole)/2)

	s.SetFault(marketplace.Hang)
	start := time.Now()
	_, _, err = get(t, url, "")
	assert.Error(t, err)
	assert.GreaterOrEqual(t, time.Since(start), 3*time.Second, "no answer until the client gives up")

	s.SetFault(marketplace.NoFault)
	s.SetRate(20_000)
	start = time.Now()
	code, body, err = get(t, url, "bytes=0-9999")
	require.NoError(t, err)
	assert.Equal(t, 206, code)
	assert.Len(t, body, 10000)
	assert.GreaterOrEqual(t, time.Since(start), 400*time.Millisecond, "10 kB at 20 kB/s")

	var reqs []marketplace.Request
	require.Eventually(t, func() bool {
		reqs = s.Requests()
		return len(reqs) == 9 && !reqs[8].End.IsZero()
	}, 5*time.Second, 10*time.Millisecond)
	assert.Equal(t, "bytes=10-", reqs[1].Range)
	assert.Equal(t, marketplace.Hang, reqs[7].Fault)
	assert.Equal(t, int64(10000), reqs[8].Sent)
}

// TestInstallFromGitOverHTTP: the real CLI adds the marketplace over smart
// HTTP and installs the plugin; the installed copy carries the launcher and
// the test release's checksums, and no built binary.
func TestInstallFromGitOverHTTP(t *testing.T) {
	r := marketplace.New(t, marketplace.Options{})
	host := r.Release.Host()
	assert.Greater(t, host.Size, int64(1<<20), "a real release archive")
	r.Install(t)
	root := r.PluginRoot("")
	assert.FileExists(t, filepath.Join(root, "bin", "synaxi-run"))
	sums, err := os.ReadFile(filepath.Join(root, "checksums.txt"))
	require.NoError(t, err)
	assert.Contains(t, string(sums), host.SHA256+"  "+host.Name)
	bins, _ := filepath.Glob(filepath.Join(root, "bin", "synaxi-*"))
	assert.Equal(t, []string{filepath.Join(root, "bin", "synaxi-run")}, bins, "no built binary in the installed copy")

	// The launcher in the installed copy downloads the release from the
	// loopback server and runs it.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := r.Env.RunProgram(ctx, "sh", filepath.Join(root, "bin", "synaxi-run"), "synaxi", "-version")
	require.NoError(t, err)
	assert.Equal(t, 0, res.ExitCode, "%s%s", res.Stdout, res.Stderr)
	assert.NotEmpty(t, strings.TrimSpace(res.Stdout), "the downloaded synaxi printed its version")
	reqs := r.Releases.Requests()
	require.NotEmpty(t, reqs)
	assert.Equal(t, 200, reqs[0].Status)
	assert.Equal(t, host.Size, reqs[0].Sent)
}
