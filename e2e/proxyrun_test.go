package e2e

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// startProxy runs the built synaxi-proxyd in front of upstream on a free
// loopback port, with env and extra serve flags, and returns its base URL
// and log file once /health answers. The proxy is killed when the test ends.
func startProxy(t *testing.T, env []string, upstream string, flags ...string) (base, logPath string) {
	t.Helper()
	bin, err := buildProxyOnce()
	require.NoError(t, err)
	port := freePort(t)
	args := append([]string{"serve", "--listen", fmt.Sprintf("127.0.0.1:%d", port), "--upstream", upstream}, flags...)
	proxy := exec.Command(bin, args...)
	proxy.Env = env
	logPath = filepath.Join(t.TempDir(), "proxyd.log")
	proxyLog, err := os.Create(logPath)
	require.NoError(t, err)
	proxy.Stdout, proxy.Stderr = proxyLog, proxyLog
	require.NoError(t, proxy.Start())
	t.Cleanup(func() { _ = proxy.Process.Kill(); _ = proxy.Wait(); proxyLog.Close() })
	base = fmt.Sprintf("http://127.0.0.1:%d", port)
	require.Eventually(t, func() bool {
		r, err := http.Get(base + "/health")
		if err != nil {
			return false
		}
		r.Body.Close()
		return r.StatusCode == http.StatusOK
	}, 20*time.Second, 50*time.Millisecond, "proxy health")
	return base, logPath
}

// surveyTask is the survey's prompt for a work tree.
func surveyTask(work string) string { return surveyTaskN(work, surveyModules) }

// surveyTaskN is the prompt of a survey of n modules.
func surveyTaskN(work string, n int) string {
	return fmt.Sprintf("Survey every module m01.go to m%02d.go in %s, fix the bugs marked `BUG:` in them, then prove it with `sh %s`.",
		n, filepath.Join(work, "mods"), filepath.Join(work, "check.sh"))
}
