package e2e_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/e2e/claudecli"
	"github.com/synaxi/synaxi/e2e/marketplace"
	"github.com/synaxi/synaxi/internal/xdg"
)

// launcherVersion is the plugin version the launcher tests pretend to ship.
const launcherVersion = "9.9.9-test"

// fakeSession is the "binary" inside the test release: it proves that it ran,
// with which arguments, and that the hook's stdin reached it.
const fakeSession = "#!/bin/sh\nprintf 'ran %s\\n' \"$*\"\ncat\n"

// launcherRig is a plugin directory holding only the launcher, its manifest
// and a checksums file, plus a release server and isolated HOME/XDG dirs.
type launcherRig struct {
	t        *testing.T
	plugin   string // plugin root
	home     string
	name     string // archive file name
	path     string // the archive the server serves
	srv      *marketplace.ReleaseServer
	extraEnv []string
	shell    string // the sh that runs the launcher ("sh" unless a test says otherwise)
}

func newLauncherRig(t *testing.T) *launcherRig {
	t.Helper()
	r := &launcherRig{t: t, plugin: filepath.Join(t.TempDir(), "plugin"), home: t.TempDir(), shell: "sh"}
	require.NoError(t, os.MkdirAll(filepath.Join(r.plugin, "bin"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(r.plugin, ".claude-plugin"), 0o755))
	src, err := os.ReadFile(filepath.Join(claudecli.RepoRoot(), "plugin", "bin", "synaxi-run"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(r.plugin, "bin", "synaxi-run"), src, 0o755))
	manifest := fmt.Sprintf("{\n  \"name\": \"synaxi\",\n  \"version\": %q\n}\n", launcherVersion)
	require.NoError(t, os.WriteFile(filepath.Join(r.plugin, ".claude-plugin", "plugin.json"), []byte(manifest), 0o644))

	r.name = fmt.Sprintf("synaxi_%s_%s_%s.tar.gz", launcherVersion, runtime.GOOS, runtime.GOARCH)
	archive := buildArchive(t, strings.TrimSuffix(r.name, ".tar.gz"), withSynaxi(t, map[string]string{"synaxi-session": fakeSession}))
	sum := sha256.Sum256(archive)
	checksums := fmt.Sprintf("%s  synaxi_%s_other_arch.tar.gz\n%s  %s\n",
		strings.Repeat("0", 64), launcherVersion, hex.EncodeToString(sum[:]), r.name)
	require.NoError(t, os.WriteFile(filepath.Join(r.plugin, "checksums.txt"), []byte(checksums), 0o644))

	dir := t.TempDir()
	r.path = filepath.Join(dir, r.name)
	require.NoError(t, os.WriteFile(r.path, archive, 0o644))
	r.srv = marketplace.ServeRelease(t, &marketplace.Release{Version: launcherVersion, Dir: dir,
		Archives: []marketplace.Archive{{Name: r.name, Path: r.path, SHA256: hex.EncodeToString(sum[:]), Size: int64(len(archive))}}})
	// The fetcher outlives the launcher; the test's end waits for it
	// (registered after TempDir, so it runs before the HOME is removed).
	t.Cleanup(func() { awaitFetchers(t, r.home) })
	return r
}

// serve replaces the archive the server serves (a tampered one, say).
func (r *launcherRig) serve(archive []byte) {
	r.t.Helper()
	require.NoError(r.t, os.WriteFile(r.path, archive, 0o644))
}

// hits is how many requests the release server has seen.
func (r *launcherRig) hits() int { return len(r.srv.Requests()) }

func (r *launcherRig) binDir() string { return filepath.Dir(r.dataBin()) }

// withSynaxi adds a `synaxi` to a test release's files, as every release
// has one: the launcher runs it after an install to switch `current` and
// prune (internal/launcher). It is a script that runs the built one, so the
// archive stays small.
func withSynaxi(t *testing.T, files map[string]string) map[string]string {
	t.Helper()
	require.NoError(t, claudecli.BuildPlugin())
	files["synaxi"] = fmt.Sprintf("#!/bin/sh\nexec '%s' \"$@\"\n", filepath.Join(claudecli.RepoRoot(), "plugin", "bin", "synaxi"))
	return files
}

// buildArchive makes a release tarball: one top-level directory holding the
// given executables.
func buildArchive(t *testing.T, dir string, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	require.NoError(t, tw.WriteHeader(&tar.Header{Name: dir + "/", Typeflag: tar.TypeDir, Mode: 0o755}))
	for name, body := range files {
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: dir + "/" + name, Mode: 0o755, Size: int64(len(body))}))
		_, err := tw.Write([]byte(body))
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	require.NoError(t, gz.Close())
	return buf.Bytes()
}

// dirs are synaxi's directories as the Go binaries resolve them for the
// launcher's environment (HOME only) on this OS.
func (r *launcherRig) dirs() xdg.Dirs {
	return xdg.For(runtime.GOOS, func(k string) string {
		if k == "HOME" {
			return r.home
		}
		return ""
	})
}

func (r *launcherRig) dataBin() string { return r.dirs().DataPath("bin", launcherVersion) }

func (r *launcherRig) logFile() string { return r.dirs().StatePath("launcher.log") }

func (r *launcherRig) env(base string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "HOME" || strings.HasPrefix(k, "XDG_") || strings.HasPrefix(k, "CLAUDE") || strings.HasPrefix(k, "SYNAXI_") {
			continue
		}
		env = append(env, kv)
	}
	// Wait for the download, so a first run runs the binary; a test of the
	// entry points' own budgets sets SYNAXI_LAUNCHER_WAIT= (empty) in extraEnv.
	env = append(env, "HOME="+r.home, "SYNAXI_RELEASE_BASE="+base, "SYNAXI_LAUNCHER_WAIT=60")
	return append(env, r.extraEnv...)
}

// launch runs `sh synaxi-run args…` with stdin, as Claude Code would.
func (r *launcherRig) launch(stdin string, args ...string) (stdout string, code int) {
	r.t.Helper()
	return r.launchWith(r.srv.Base(), stdin, args...)
}

func (r *launcherRig) launchWith(base, stdin string, args ...string) (string, int) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.shell, append([]string{filepath.Join(r.plugin, "bin", "synaxi-run")}, args...)...)
	cmd.Env = r.env(base)
	cmd.Dir = r.home // a relative path the launcher wrongly used lands here, not in the checkout
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			r.t.Fatalf("run launcher: %v", err)
		}
	}
	assert.Empty(r.t, errb.String(), "the launcher writes nothing to stderr")
	return out.String(), cmd.ProcessState.ExitCode()
}

func (r *launcherRig) log() string {
	data, _ := os.ReadFile(r.logFile())
	return string(data)
}

func TestLauncherDownloadsVerifiesAndRuns(t *testing.T) {
	// sh is dash on Debian; bash in POSIX mode stands in for macOS's /bin/sh.
	for _, shell := range []string{"sh", "bash"} {
		t.Run(shell, func(t *testing.T) {
			if _, err := exec.LookPath(shell); err != nil {
				t.Skipf("no %s here", shell)
			}
			testLauncherDownloadsVerifiesAndRuns(t, shell)
		})
	}
}

func testLauncherDownloadsVerifiesAndRuns(t *testing.T, shell string) {
	r := newLauncherRig(t)
	r.shell = shell
	if shell == "bash" {
		r.extraEnv = []string{"POSIXLY_CORRECT=1"}
	}

	out, code := r.launch(`{"session_id":"s1"}`, "synaxi-session", "start", "x y")
	assert.Equal(t, 0, code)
	assert.Equal(t, "ran start x y\n{\"session_id\":\"s1\"}", out, "arguments and stdin reach the binary")
	assert.Equal(t, 1, r.hits())
	fi, err := os.Stat(filepath.Join(r.dataBin(), "synaxi-session"))
	require.NoError(t, err)
	assert.NotZero(t, fi.Mode()&0o100, "installed binary is executable")
	awaitFetchers(t, r.home)
	assert.Contains(t, r.log(), "installed "+r.name)
	leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(r.dataBin()), ".*"))
	assert.Empty(t, leftovers, "no staging directory or lock left behind")

	// Reused without the network.
	out, code = r.launchWith("http://127.0.0.1:1/none", "again", "synaxi-session", "end")
	assert.Equal(t, 0, code)
	assert.Equal(t, "ran end\nagain", out)
	assert.Equal(t, 1, r.hits())
}

func TestLauncherHonoursPluginDataDir(t *testing.T) {
	r := newLauncherRig(t)
	data := filepath.Join(t.TempDir(), "plugin-data")
	r.extraEnv = []string{"CLAUDE_PLUGIN_DATA=" + data}
	out, code := r.launch("", "synaxi-session", "start")
	assert.Equal(t, 0, code)
	assert.Equal(t, "ran start\n", out)
	assert.FileExists(t, filepath.Join(data, "bin", launcherVersion, "synaxi-session"))
	assert.NoDirExists(t, r.dataBin())
}

func TestLauncherRefusesTamperedArchive(t *testing.T) {
	r := newLauncherRig(t)
	r.serve(buildArchive(t, strings.TrimSuffix(r.name, ".tar.gz"),
		map[string]string{"synaxi-session": "#!/bin/sh\necho evil\n"}))

	out, code := r.launch("{}", "synaxi-session", "start")
	assert.Equal(t, 0, code)
	assert.Empty(t, out)
	assert.Equal(t, 1, r.hits())
	assert.NoDirExists(t, r.dataBin())
	assert.Contains(t, r.log(), "does not match checksums.txt")
	leftovers, _ := filepath.Glob(filepath.Join(r.binDir(), ".*"))
	assert.Equal(t, []string{r.failedFile()}, leftovers, "only the failure is remembered: no partial file, staging directory or lock")
}

func TestLauncherFailsOpenWithoutServer(t *testing.T) {
	r := newLauncherRig(t)
	out, code := r.launchWith("http://127.0.0.1:1/none", "{}", "synaxi-noreread", "pre")
	assert.Equal(t, 0, code)
	assert.Empty(t, out)
	assert.Contains(t, r.log(), "download")
	assert.NoDirExists(t, r.dataBin())
}

func TestLauncherFailsOpenWhenArchiveLacksBinary(t *testing.T) {
	r := newLauncherRig(t)
	out, code := r.launch("{}", "synaxi-noreread", "pre")
	assert.Equal(t, 0, code)
	assert.Empty(t, out)
	assert.Contains(t, r.log(), "has no synaxi-noreread")
}

func TestLauncherFailsOpenWithoutDownloader(t *testing.T) {
	r := newLauncherRig(t)
	tools := t.TempDir()
	for _, name := range []string{"sh", "sed", "head", "awk", "mkdir", "mktemp", "find", "rm", "rmdir",
		"dirname", "uname", "date", "tar", "chmod", "mv", "sha256sum", "cat", "gzip"} {
		path, err := exec.LookPath(name)
		if err != nil {
			continue
		}
		require.NoError(t, os.Symlink(path, filepath.Join(tools, name)))
	}
	r.extraEnv = []string{"PATH=" + tools}
	out, code := r.launch("{}", "synaxi-session", "start")
	assert.Equal(t, 0, code)
	assert.Empty(t, out)
	awaitFetchers(t, r.home)
	assert.Contains(t, r.log(), "neither curl nor wget")
	assert.Zero(t, r.hits())
}

func TestLauncherPrefersBuiltBinary(t *testing.T) {
	r := newLauncherRig(t)
	built := filepath.Join(r.plugin, "bin", "synaxi-session")
	// Written without the execute bit, as some plugin install paths leave it.
	require.NoError(t, os.WriteFile(built, []byte("#!/bin/sh\necho built \"$@\"\n"), 0o644))
	out, code := r.launch("", "synaxi-session", "start")
	assert.Equal(t, 0, code)
	assert.Equal(t, "built start\n", out)
	assert.Zero(t, r.hits(), "no network when a built binary is present")

	dev := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dev, "synaxi-session"), []byte("#!/bin/sh\necho dev \"$@\"\n"), 0o755))
	r.extraEnv = []string{"SYNAXI_BIN_DIR=" + dev}
	out, _ = r.launch("", "synaxi-session", "end")
	assert.Equal(t, "dev end\n", out, "SYNAXI_BIN_DIR overrides the plugin's own binaries")
}

func TestLauncherIgnoresUnknownNames(t *testing.T) {
	r := newLauncherRig(t)
	for _, args := range [][]string{{}, {"sh"}, {"../synaxi-session"}, {"synaxi-session/.."}, {"SYNAXI"}} {
		out, code := r.launch("", args...)
		assert.Equal(t, 0, code, "%q", args)
		assert.Empty(t, out, "%q", args)
	}
	assert.Zero(t, r.hits())
}

func TestLauncherWithoutChecksumDoesNotDownload(t *testing.T) {
	r := newLauncherRig(t)
	require.NoError(t, os.WriteFile(filepath.Join(r.plugin, "checksums.txt"), nil, 0o644))
	out, code := r.launch("{}", "synaxi-session", "start")
	assert.Equal(t, 0, code)
	assert.Empty(t, out)
	assert.Zero(t, r.hits())
	assert.Contains(t, r.log(), "no checksum")
}

// TestLauncherConcurrentFirstRuns starts many hooks at once on a machine
// without the binary: every one exits 0, the archive is downloaded and
// installed once and whole, and no staging directory or lock remains.
func TestLauncherConcurrentFirstRuns(t *testing.T) {
	r := newLauncherRig(t)
	const n = 8
	var wg sync.WaitGroup
	outs := make([]string, n)
	codes := make([]int, n)
	for i := range n {
		wg.Go(func() { outs[i], codes[i] = r.launch("", "synaxi-session", "start") })
	}
	wg.Wait()
	ran := 0
	for i := range n {
		assert.Equal(t, 0, codes[i])
		switch outs[i] {
		case "ran start\n":
			ran++
		case "":
		default:
			t.Errorf("unexpected output %q", outs[i])
		}
	}
	assert.GreaterOrEqual(t, ran, 1)
	out, _ := r.launch("", "synaxi-session", "start")
	assert.Equal(t, "ran start\n", out)
	assert.Equal(t, 1, r.hits(), "one download")
	awaitFetchers(t, r.home)
	assert.Equal(t, []string{launcherVersion, "current"}, dirNames(t, r.binDir()))
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestLauncherDownloadLock: a lock whose holder lives makes other callers
// wait their budget and start no download; once the holder is gone, the lock
// is taken over at once. The holder is flock(1), as the fetcher holds it.
func TestLauncherDownloadLock(t *testing.T) {
	flock, err := exec.LookPath("flock")
	if err != nil {
		t.Skip("needs flock(1)")
	}
	r := newLauncherRig(t)
	lock := filepath.Join(r.binDir(), "."+launcherVersion+".lock")
	require.NoError(t, os.MkdirAll(lock, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(lock, "owner"), []byte("1\n"), 0o600))
	holder := exec.Command(flock, "-o", lock, "sleep", "60")
	require.NoError(t, holder.Start())
	t.Cleanup(func() { _ = holder.Process.Kill(); _ = holder.Wait() })
	require.Eventually(t, func() bool {
		return exec.Command(flock, "-n", lock, "true").Run() != nil
	}, 10*time.Second, 10*time.Millisecond, "flock holds the lock")

	r.extraEnv = []string{"SYNAXI_LAUNCHER_WAIT=1"}
	out, code := r.launch("", "synaxi-session", "start")
	assert.Equal(t, 0, code)
	assert.Empty(t, out)
	assert.Zero(t, r.hits(), "a download is in progress elsewhere")

	// The holder dies (its lock with it); the owner file it wrote stays.
	require.NoError(t, holder.Process.Kill())
	_ = holder.Wait()
	r.extraEnv = []string{"SYNAXI_LAUNCHER_WAIT=60"}
	out, code = r.launch("", "synaxi-session", "start")
	assert.Equal(t, 0, code)
	assert.Equal(t, "ran start\n", out)
	assert.Equal(t, 1, r.hits())
	awaitFetchers(t, r.home)
	assert.NoDirExists(t, lock)
	assert.Contains(t, r.log(), "took over a stale lock")
}

// TestLauncherForksNothing traces the launcher on its hot paths (a binary
// built beside it, one downloaded earlier into the data dir that
// CLAUDE_PLUGIN_DATA or XDG_DATA_HOME names, the development override): the
// only programs started are sh itself and the binary, and sh forks no child on
// the way. (With neither variable set, the default data dir depends on the OS
// and costs one uname.)
func TestLauncherForksNothing(t *testing.T) {
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("needs strace")
	}
	if out, err := exec.Command(strace, "-f", "-e", "trace=none", "true").CombinedOutput(); err != nil {
		t.Skipf("strace cannot trace here: %v %s", err, out)
	}
	const bin = "#!/bin/sh\necho ran \"$@\"\n"
	trace := func(t *testing.T, r *launcherRig, want string) {
		t.Helper()
		log := filepath.Join(t.TempDir(), "trace")
		cmd := exec.Command(strace, "-f", "-qq", "-o", log, "-e", "trace=fork,vfork,clone,clone3,execve",
			"sh", filepath.Join(r.plugin, "bin", "synaxi-run"), "synaxi-session", "start")
		cmd.Env = r.env("http://127.0.0.1:1/none")
		out, err := cmd.Output()
		require.NoError(t, err)
		assert.Equal(t, "ran start\n", string(out))
		data, err := os.ReadFile(log)
		require.NoError(t, err)
		var calls []string
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			_, call, _ := strings.Cut(line, " ") // "PID  call(…)"
			name, args, _ := strings.Cut(strings.TrimSpace(call), "(")
			if name == "execve" {
				args, _, _ = strings.Cut(args, ",")
				calls = append(calls, "execve "+filepath.Base(strings.Trim(args, `"`)))
			} else {
				calls = append(calls, name)
			}
		}
		assert.Equal(t, []string{"execve sh", "execve " + want}, calls, "sh, then the binary, and no fork: %s", data)
	}
	t.Run("built", func(t *testing.T) {
		r := newLauncherRig(t)
		require.NoError(t, os.WriteFile(filepath.Join(r.plugin, "bin", "synaxi-session"), []byte(bin), 0o755))
		trace(t, r, "synaxi-session")
	})
	t.Run("downloaded earlier", func(t *testing.T) {
		for _, v := range []string{"CLAUDE_PLUGIN_DATA", "XDG_DATA_HOME"} {
			r := newLauncherRig(t)
			data := t.TempDir()
			r.extraEnv = []string{v + "=" + data}
			dest := filepath.Join(data, "bin", launcherVersion)
			if v == "XDG_DATA_HOME" {
				dest = filepath.Join(data, xdg.App, "bin", launcherVersion)
			}
			require.NoError(t, os.MkdirAll(dest, 0o700))
			require.NoError(t, os.WriteFile(filepath.Join(dest, "synaxi-session"), []byte(bin), 0o755))
			trace(t, r, "synaxi-session")
		}
	})
	t.Run("override", func(t *testing.T) {
		r := newLauncherRig(t)
		dev := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dev, "synaxi-session"), []byte(bin), 0o755))
		r.extraEnv = []string{"SYNAXI_BIN_DIR=" + dev}
		trace(t, r, "synaxi-session")
	})
}

// TestManifestVersionFirst: the plugin's manifest names its version on its
// second line. The launcher reads the manifest with the shell's own read,
// which takes a regular file one byte per read(2) up to the version's line:
// second, that is about 25 system calls on every hook call of an installed
// plugin, where after "$schema" and "name" it was about 120.
func TestManifestVersionFirst(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(claudecli.RepoRoot(), "plugin", ".claude-plugin", "plugin.json"))
	require.NoError(t, err)
	lines := strings.Split(string(data), "\n")
	require.Greater(t, len(lines), 2)
	assert.Contains(t, lines[1], `"version"`, "the manifest's second line")
}

// TestLauncherReadsMinifiedManifest: the version comes from the manifest
// whatever its layout, read by the shell alone.
func TestLauncherReadsMinifiedManifest(t *testing.T) {
	r := newLauncherRig(t)
	manifest := fmt.Sprintf(`{"name":"synaxi","description":"x","version":%q,"author":{"name":"a"}}`, launcherVersion)
	require.NoError(t, os.WriteFile(filepath.Join(r.plugin, ".claude-plugin", "plugin.json"), []byte(manifest), 0o644))
	out, code := r.launch("{}", "synaxi-session", "start")
	assert.Equal(t, 0, code)
	assert.Equal(t, "ran start\n{}", out)
	assert.Equal(t, 1, r.hits())
}

// TestLauncherDirsAgreeWithXDG: the launcher, a shell script that runs before
// any binary exists, resolves its log (state) and downloads (data) where
// internal/xdg, the Go binaries' resolver, puts synaxi's state and data
// directories, under the Linux and the macOS defaults (a uname on PATH says
// which) and with XDG variables absolute or relative.
func TestLauncherDirsAgreeWithXDG(t *testing.T) {
	for _, goos := range []string{"linux", "darwin"} {
		sysname := map[string]string{"linux": "Linux", "darwin": "Darwin"}[goos]
		fake := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(fake, "uname"),
			[]byte("#!/bin/sh\ncase $1 in -s) echo "+sysname+" ;; *) exec /usr/bin/env -u PATH uname \"$@\" ;; esac\n"), 0o755))
		for name, vars := range map[string][]string{
			"defaults": nil,
			"absolute": {"XDG_STATE_HOME=" + filepath.Join(fake, "s"), "XDG_DATA_HOME=" + filepath.Join(fake, "d")},
			"relative": {"XDG_STATE_HOME=s", "XDG_DATA_HOME=d"},
		} {
			t.Run(goos+"/"+name, func(t *testing.T) {
				r := newLauncherRig(t)
				r.extraEnv = append([]string{"PATH=" + fake + string(os.PathListSeparator) + os.Getenv("PATH")}, vars...)
				env := map[string]string{"HOME": r.home}
				for _, kv := range vars {
					k, v, _ := strings.Cut(kv, "=")
					env[k] = v
				}
				dirs := xdg.For(goos, func(k string) string { return env[k] })

				// Nothing to run and nothing to download: the launcher logs why.
				out, code := r.launchWith("http://127.0.0.1:1/none", "", "synaxi-session", "start")
				assert.Equal(t, 0, code)
				assert.Empty(t, out)
				assert.FileExists(t, dirs.StatePath("launcher.log"), "the launcher logs where the binaries keep state")

				// A binary in the data dir the binaries resolve is the one it runs.
				dest := dirs.DataPath("bin", launcherVersion)
				require.NoError(t, os.MkdirAll(dest, 0o700))
				require.NoError(t, os.WriteFile(filepath.Join(dest, "synaxi-session"), []byte(fakeSession), 0o755))
				out, code = r.launchWith("http://127.0.0.1:1/none", "in", "synaxi-session", "start")
				assert.Equal(t, 0, code)
				assert.Equal(t, "ran start\nin", out)
			})
		}
	}
}
