package e2e_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/e2e/claudecli"
	"github.com/synaxi/synaxi/e2e/marketplace"
)

// fetchers lists the launcher's detached fetchers, and the downloads they
// started, running with HOME=home.
func fetchers(home string) []int {
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err != nil || !(bytes.Contains(cmdline, []byte("\x00--fetch")) ||
			bytes.HasPrefix(cmdline, []byte("curl\x00")) || bytes.HasPrefix(cmdline, []byte("wget\x00"))) {
			continue
		}
		env, _ := os.ReadFile(filepath.Join("/proc", d.Name(), "environ"))
		if bytes.Contains(env, []byte("\x00HOME="+home+"\x00")) || bytes.HasPrefix(env, []byte("HOME="+home+"\x00")) {
			out = append(out, pid)
		}
	}
	return out
}

// awaitFetchers waits up to a minute for the fetchers of home to end, then
// kills them (a hung server's, say). A fetcher a caller has just started
// may not show yet (it is being forked), so none must show for 300 ms.
func awaitFetchers(t testing.TB, home string) {
	deadline := time.Now().Add(time.Minute)
	quiet := 0
	for {
		pids := fetchers(home)
		if len(pids) == 0 {
			if quiet++; quiet >= 6 {
				return
			}
			time.Sleep(50 * time.Millisecond)
			continue
		}
		quiet = 0
		if time.Now().After(deadline) {
			for _, pid := range pids {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Logf("killed fetchers %v still running after a minute", pids)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (r *launcherRig) failedFile() string {
	return filepath.Join(r.binDir(), "."+launcherVersion+".failed")
}

// failure reads the launcher's failure record: attempts, kind, sentence.
func (r *launcherRig) failure() (attempts int, kind, sentence string) {
	r.t.Helper()
	data, err := os.ReadFile(r.failedFile())
	require.NoError(r.t, err)
	head, sentence, _ := strings.Cut(strings.TrimSpace(string(data)), "\n")
	f := strings.Fields(head)
	require.Len(r.t, f, 3, "%q", data)
	attempts, err = strconv.Atoi(f[1])
	require.NoError(r.t, err)
	return attempts, f[2], sentence
}

// backdate moves the remembered failure an hour and more into the past, as
// if its backoff window had passed.
func (r *launcherRig) backdate() {
	r.t.Helper()
	data, err := os.ReadFile(r.failedFile())
	require.NoError(r.t, err)
	_, rest, _ := strings.Cut(string(data), " ")
	old := strconv.FormatInt(time.Now().Add(-3*time.Hour).Unix(), 10)
	require.NoError(r.t, os.WriteFile(r.failedFile(), []byte(old+" "+rest), 0o600))
}

// leftovers lists what the launcher left in the bin directory besides the
// installed versions, `current` and the failure record.
func (r *launcherRig) leftovers() []string {
	r.t.Helper()
	var out []string
	for _, n := range dirNames(r.t, r.binDir()) {
		if n != launcherVersion && n != "current" && n != filepath.Base(r.failedFile()) {
			out = append(out, n)
		}
	}
	return out
}

// settle waits for the fetchers, then returns the requests seen.
func (r *launcherRig) settle() []marketplace.Request {
	r.t.Helper()
	awaitFetchers(r.t, r.home)
	return r.srv.Requests()
}

// TestLauncherBackoff: a failed download (404) is remembered; no caller
// tries again within the backoff window; after it, one attempt.
func TestLauncherBackoff(t *testing.T) {
	r := newLauncherRig(t)
	r.srv.SetFault(marketplace.NotFound)
	out, code := r.launch("{}", "synaxi-session", "start")
	assert.Equal(t, 0, code)
	assert.Empty(t, out)
	require.Len(t, r.settle(), 1)
	attempts, kind, sentence := r.failure()
	assert.Equal(t, 1, attempts)
	assert.Equal(t, "download", kind)
	assert.Contains(t, sentence, "HTTP 404")
	assert.Empty(t, r.leftovers(), "no partial file, staging directory or lock")

	for range 3 {
		out, code = r.launch("{}", "synaxi-noreread", "pre")
		assert.Equal(t, 0, code)
		assert.Empty(t, out)
	}
	assert.Len(t, r.settle(), 1, "no attempt within the backoff window")

	r.backdate()
	r.launch("{}", "synaxi-noreread", "pre")
	assert.Len(t, r.settle(), 2, "one attempt once the window has passed")
	attempts, _, _ = r.failure()
	assert.Equal(t, 2, attempts)
}

// TestLauncherWrongChecksumNeverRetried: a whole, valid archive with the
// wrong checksum is refused and never fetched again for this version.
func TestLauncherWrongChecksumNeverRetried(t *testing.T) {
	r := newLauncherRig(t)
	r.srv.SetFault(marketplace.WrongChecksum)
	out, _ := r.launch("{}", "synaxi-session", "start")
	assert.Empty(t, out)
	require.Len(t, r.settle(), 1)
	_, kind, sentence := r.failure()
	assert.Equal(t, "checksum", kind)
	assert.Contains(t, sentence, "does not match checksums.txt")
	assert.Empty(t, r.leftovers())

	r.backdate()
	r.srv.SetFault(marketplace.NoFault)
	r.launch("{}", "synaxi-session", "start")
	assert.Len(t, r.settle(), 1, "not retried until the plugin version changes")
	assert.NoDirExists(t, r.dataBin())
}

// TestLauncherTruncatedArchive: a short archive is a transient failure,
// with nothing partial kept.
func TestLauncherTruncatedArchive(t *testing.T) {
	r := newLauncherRig(t)
	r.srv.SetFault(marketplace.Truncate)
	r.launch("{}", "synaxi-session", "start")
	require.Len(t, r.settle(), 1)
	_, kind, sentence := r.failure()
	assert.Equal(t, "download", kind)
	assert.Contains(t, sentence, "incomplete or damaged")
	assert.Empty(t, r.leftovers())

	r.backdate()
	r.srv.SetFault(marketplace.NoFault)
	r.extraEnv = []string{"SYNAXI_LAUNCHER_WAIT=60"}
	out, _ := r.launch("{}", "synaxi-session", "start")
	assert.Equal(t, "ran start\n{}", out)
	assert.NoFileExists(t, r.failedFile(), "success forgets the failure")
}

// TestLauncherResumesKilledDownload: a connection killed halfway keeps the
// bytes that arrived; the next attempt asks for the rest with Range.
func TestLauncherResumesKilledDownload(t *testing.T) {
	r := newLauncherRig(t)
	r.srv.SetFault(marketplace.KillHalfway)
	r.launch("{}", "synaxi-session", "start")
	reqs := r.settle()
	require.Len(t, reqs, 1)
	_, kind, sentence := r.failure()
	assert.Equal(t, "download", kind)
	assert.Contains(t, sentence, "resumes")
	part := filepath.Join(r.binDir(), "."+launcherVersion+".part")
	fi, err := os.Stat(part)
	require.NoError(t, err)
	assert.Equal(t, reqs[0].Sent, fi.Size())

	r.backdate()
	r.srv.SetFault(marketplace.NoFault)
	r.extraEnv = []string{"SYNAXI_LAUNCHER_WAIT=60"}
	out, _ := r.launch("{}", "synaxi-session", "start")
	assert.Equal(t, "ran start\n{}", out)
	reqs = r.settle()
	require.Len(t, reqs, 2)
	assert.Equal(t, fmt.Sprintf("bytes=%d-", fi.Size()), reqs[1].Range)
	assert.Equal(t, 206, reqs[1].Status)
	assert.Empty(t, r.leftovers(), "the partial file is gone once installed")
}

// TestLauncherHookDoesNotWaitOnHungServer: a hook returns at once while the
// detached fetcher waits on the server; killing the fetcher
// leaves a lock the next caller takes over.
func TestLauncherHookDoesNotWaitOnHungServer(t *testing.T) {
	r := newLauncherRig(t)
	r.extraEnv = []string{"SYNAXI_LAUNCHER_WAIT="} // the hooks' own budget
	r.srv.SetFault(marketplace.Hang)
	start := time.Now()
	out, code := r.launch("{}", "synaxi-noreread", "pre")
	took := time.Since(start)
	assert.Equal(t, 0, code)
	assert.Empty(t, out)
	t.Logf("hook returned after %s with the server hung", took.Round(time.Millisecond))
	assert.Less(t, took, 10*time.Second, "a hook does not wait for the download")

	lock := filepath.Join(r.binDir(), "."+launcherVersion+".lock")
	var owner []byte
	require.Eventually(t, func() bool {
		var err error
		owner, err = os.ReadFile(filepath.Join(lock, "owner"))
		return err == nil
	}, 10*time.Second, 20*time.Millisecond, "the fetcher holds the lock")
	pid, err := strconv.Atoi(strings.Fields(string(owner))[0])
	require.NoError(t, err)
	assert.Contains(t, fetchers(r.home), pid, "the fetcher outlived the hook")

	out, _ = r.launch("", "synaxi-statusline")
	assert.Contains(t, out, "is downloading its programs", "the status line says why")

	// Killing the fetcher leaves its curl, which still writes the partial
	// file: the lock stays live until both are gone.
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	time.Sleep(200 * time.Millisecond)
	r.extraEnv = []string{"SYNAXI_LAUNCHER_WAIT=0"}
	r.launch("{}", "synaxi-session", "start")
	assert.Len(t, r.srv.Requests(), 1, "no second download beside the orphaned one")
	for _, p := range fetchers(r.home) {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
	require.Eventually(t, func() bool { return len(fetchers(r.home)) == 0 }, 10*time.Second, 20*time.Millisecond)
	r.srv.SetFault(marketplace.NoFault)
	r.extraEnv = []string{"SYNAXI_LAUNCHER_WAIT=60"}
	out, _ = r.launch("{}", "synaxi-session", "start")
	assert.Equal(t, "ran start\n{}", out, "the dead fetcher's lock was taken over\n%s", r.log())
	r.settle()
	assert.Empty(t, r.leftovers(), "no lock, partial file or staging directory")
}

// TestLauncherStatusLineSentence: without its binary the status line shows
// the launcher's sentence; the MCP server and synaxi say it on stderr and
// exit 1.
func TestLauncherStatusLineSentence(t *testing.T) {
	r := newLauncherRig(t)
	r.srv.SetFault(marketplace.NotFound)
	r.launch("{}", "synaxi-session", "start")
	r.settle()
	out, code := r.launch("", "synaxi-statusline")
	assert.Equal(t, 0, code)
	assert.Regexp(t, `^synaxi could not download its programs: the server answered HTTP 404 for \S+\. It tries again after \d\d:\d\d UTC\.\n$`, out)

	cmd := exec.Command("sh", filepath.Join(r.plugin, "bin", "synaxi-run"), "synaxi", "doctor")
	cmd.Env = r.env(r.srv.Base())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	assert.Error(t, err)
	assert.Equal(t, 1, cmd.ProcessState.ExitCode())
	assert.Contains(t, stderr.String(), "HTTP 404")
	assert.Len(t, r.settle(), 1, "within the backoff window, no caller downloads")
}

// TestLauncherMCPWaitsForDownload: the MCP server waits for a slow
// download instead of failing the session's tools.
func TestLauncherMCPWaitsForDownload(t *testing.T) {
	r := newLauncherRig(t)
	r.extraEnv = []string{"SYNAXI_LAUNCHER_WAIT="} // the MCP server's own budget
	// The archive's only binary stands in for the MCP server.
	// 256 KB that do not compress, so the download takes its time in
	// curl's writes too (it buffers a few KB).
	filler := make([]byte, 256<<10)
	_, _ = rand.NewChaCha8([32]byte{7}).Read(filler)
	r.serve(buildArchive(t, strings.TrimSuffix(r.name, ".tar.gz"), map[string]string{"synaxi-mcp": fakeSession, "filler": string(filler)}))
	sumFile := filepath.Join(r.plugin, "checksums.txt")
	data, err := os.ReadFile(r.path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(sumFile, []byte(sha256hex(data)+"  "+r.name+"\n"), 0o644))
	r.srv.SetRate(len(data)/3 + 1) // about 3 s

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	cmd := exec.CommandContext(ctx, "sh", filepath.Join(r.plugin, "bin", "synaxi-run"), "synaxi-mcp")
	cmd.Env = r.env(r.srv.Base())
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0"}`)
	out, err := cmd.Output()
	require.NoError(t, err)
	assert.Equal(t, "ran \n{\"jsonrpc\":\"2.0\"}", string(out), "the server started once its binary arrived, stdin intact")
	t.Logf("the MCP server started after %s (a 3 s download)", time.Since(start).Round(time.Millisecond))
}

func sha256hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// cachePlugin lays out a plugin of version v the way Claude Code installs
// one from the marketplace, <home>/.claude/plugins/cache/synaxi/synaxi/<v>,
// with the checksums of the archives in rel. It returns the plugin root.
func cachePlugin(t *testing.T, home, v string, rel *marketplace.Release) string {
	t.Helper()
	root := filepath.Join(home, ".claude", "plugins", "cache", "synaxi", "synaxi", v)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "bin"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".claude-plugin"), 0o755))
	src, err := os.ReadFile(filepath.Join(claudecli.RepoRoot(), "plugin", "bin", "synaxi-run"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(root, "bin", "synaxi-run"), src, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, ".claude-plugin", "plugin.json"),
		fmt.Appendf(nil, "{\"name\":\"synaxi\",\"version\":%q}\n", v), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "checksums.txt"), []byte(rel.Checksums()), 0o644))
	return root
}

// fakeRelease makes archives for the given versions whose synaxi-session
// prints its version.
func fakeRelease(t *testing.T, versions ...string) *marketplace.Release {
	t.Helper()
	rel := &marketplace.Release{Dir: t.TempDir()}
	for _, v := range versions {
		name := fmt.Sprintf("synaxi_%s_%s_%s.tar.gz", v, runtime.GOOS, runtime.GOARCH)
		data := buildArchive(t, strings.TrimSuffix(name, ".tar.gz"),
			withSynaxi(t, map[string]string{"synaxi-session": "#!/bin/sh\necho " + v + "\n"}))
		path := filepath.Join(rel.Dir, name)
		require.NoError(t, os.WriteFile(path, data, 0o644))
		rel.Archives = append(rel.Archives, marketplace.Archive{Name: name, Path: path, SHA256: sha256hex(data), Size: int64(len(data))})
	}
	return rel
}

// runFrom runs root's launcher as the Bash tool would: HOME set, no
// CLAUDE_PLUGIN_DATA, XDG or anything else of Claude Code's.
func runFrom(t *testing.T, home, root, base string, extra ...string) string {
	t.Helper()
	cmd := exec.Command("sh", filepath.Join(root, "bin", "synaxi-run"), "synaxi-session", "start")
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "SYNAXI_RELEASE_BASE=" + base,
		"SYNAXI_LAUNCHER_WAIT=60"}, extra...)
	cmd.Dir = home
	out, err := cmd.Output()
	require.NoError(t, err)
	awaitFetchers(t, home)
	return string(out)
}

// TestLauncherDataDirWithoutPluginData: the Bash tool's copy of the
// launcher (no CLAUDE_PLUGIN_DATA) installs into, and runs from, the very
// directory Claude Code names CLAUDE_PLUGIN_DATA for hooks and the MCP
// server: <claude dir>/plugins/data/<plugin>-<marketplace>.
func TestLauncherDataDirWithoutPluginData(t *testing.T) {
	home := t.TempDir()
	t.Cleanup(func() { awaitFetchers(t, home) })
	rel := fakeRelease(t, "1.0.0")
	srv := marketplace.ServeRelease(t, rel)
	root := cachePlugin(t, home, "1.0.0", rel)
	data := filepath.Join(home, ".claude", "plugins", "data", "synaxi-synaxi")

	assert.Equal(t, "1.0.0\n", runFrom(t, home, root, srv.Base()))
	assert.FileExists(t, filepath.Join(data, "bin", "1.0.0", "synaxi-session"))
	assert.Len(t, srv.Requests(), 1)

	// A hook, with the variable set, finds the same install.
	assert.Equal(t, "1.0.0\n", runFrom(t, home, root, srv.Base(), "CLAUDE_PLUGIN_DATA="+data))
	assert.Len(t, srv.Requests(), 1, "one download for every entry point")
}

// TestLauncherUpdateSwitchesAndPrunes: a new plugin version installs its
// binaries beside the old ones and moves `current` to them; an old
// version's binaries go once Claude Code has removed that version's plugin
// copy and no process runs them.
func TestLauncherUpdateSwitchesAndPrunes(t *testing.T) {
	home := t.TempDir()
	t.Cleanup(func() { awaitFetchers(t, home) })
	rel := fakeRelease(t, "1.0.0", "1.1.0", "1.2.0")
	srv := marketplace.ServeRelease(t, rel)
	bin := filepath.Join(home, ".claude", "plugins", "data", "synaxi-synaxi", "bin")
	current := func() string {
		target, err := os.Readlink(filepath.Join(bin, "current"))
		require.NoError(t, err)
		return target
	}

	v1 := cachePlugin(t, home, "1.0.0", rel)
	assert.Equal(t, "1.0.0\n", runFrom(t, home, v1, srv.Base()))
	assert.Equal(t, "1.0.0", current())

	v2 := cachePlugin(t, home, "1.1.0", rel)
	assert.Equal(t, "1.1.0\n", runFrom(t, home, v2, srv.Base()))
	assert.Equal(t, "1.1.0", current())
	assert.Equal(t, []string{"1.0.0", "1.1.0", "current"}, dirNames(t, bin), "1.0.0's plugin copy is still installed")
	assert.Equal(t, "1.0.0\n", runFrom(t, home, v1, srv.Base()), "a session still on 1.0.0 runs its own binaries")

	// Claude Code removes 1.0.0's copy; 1.1.0's binary is running.
	require.NoError(t, os.RemoveAll(v1))
	sleep, err := exec.LookPath("sleep")
	require.NoError(t, err)
	prog, err := os.ReadFile(sleep)
	require.NoError(t, err)
	// An executable of its own, as the proxy of an older version is.
	require.NoError(t, os.WriteFile(filepath.Join(bin, "1.1.0", "synaxi-proxyd"), prog, 0o755))
	running := exec.Command(filepath.Join(bin, "1.1.0", "synaxi-proxyd"), "60")
	require.NoError(t, running.Start())
	t.Cleanup(func() { _ = running.Process.Kill(); _ = running.Wait() })
	require.NoError(t, os.RemoveAll(v2))

	v3 := cachePlugin(t, home, "1.2.0", rel)
	assert.Equal(t, "1.2.0\n", runFrom(t, home, v3, srv.Base()))
	assert.Equal(t, "1.2.0", current())
	assert.Equal(t, []string{"1.1.0", "1.2.0", "current"}, dirNames(t, bin),
		"1.0.0 pruned; 1.1.0 kept while a process runs from it")
	assert.Len(t, srv.Requests(), 3)
}

// TestLauncherMCPGivesUpOnHungDownload: the MCP server stops waiting once
// nothing has arrived for 1.5 s, so a non-interactive session is not held for
// a server that cannot start in time; the fetcher carries on.
func TestLauncherMCPGivesUpOnHungDownload(t *testing.T) {
	r := newLauncherRig(t)
	r.extraEnv = []string{"SYNAXI_LAUNCHER_WAIT="} // the MCP server's own budget
	r.srv.SetFault(marketplace.Hang)
	start := time.Now()
	cmd := exec.Command("sh", filepath.Join(r.plugin, "bin", "synaxi-run"), "synaxi-mcp")
	cmd.Env = r.env(r.srv.Base())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	took := time.Since(start)
	assert.Error(t, err)
	assert.Empty(t, out)
	assert.Contains(t, stderr.String(), "its download has received nothing yet")
	t.Logf("the MCP server gave up after %s", took.Round(time.Millisecond))
	assert.Less(t, took, 20*time.Second, "well before its 25 s budget")
	assert.NotEmpty(t, fetchers(r.home), "the download goes on in the background")
	for _, pid := range fetchers(r.home) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}
