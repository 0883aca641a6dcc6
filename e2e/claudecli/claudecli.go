// Package claudecli runs the real Claude Code CLI in end-to-end tests.
//
// The pinned CLI (Version) is installed with npm into <repo>/.cache/claude-code
// on first use, under a file lock so parallel test binaries share one install.
// Each test gets an Env: a temporary HOME with the XDG directories under it, a
// git-initialised work directory, and the environment of the real-client
// recipe (ANTHROPIC_BASE_URL pointing at a fake upstream or the proxy, a dummy
// API key, no telemetry, no non-essential traffic). Nothing of the caller's
// own Claude Code or Anthropic configuration leaks into the child.
//
// The plugin reaches the client the way a user installs it: BuildPlugin runs
// `make build` (binaries into plugin/bin), and Env.InstallPlugin adds the
// repository as a marketplace and installs synaxi@synaxi. Installing copies
// plugin/ into the client's plugin cache, git-ignored built binaries included,
// so the hooks run the binaries just built.
package claudecli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Version is the pinned Claude Code CLI version.
const Version = "2.1.332"

// Package is the npm package of the CLI.
const Package = "@anthropic-ai/claude-code"

// PrintBGWaitCeiling is how long `claude -p` waits for background agents
// before it kills them (CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS). It is set
// explicitly so a run never silently drops a worker at the 10-minute default.
const PrintBGWaitCeiling = 5 * time.Minute

var (
	rootOnce sync.Once
	root     string

	ensureMu  sync.Mutex
	ensureBin string

	buildOnce sync.Once
	buildErr  error
)

// RepoRoot returns the checkout's root: the nearest directory at or above the
// working directory (or, failing that, this source file) that holds go.work.
// SYNAXI_REPO overrides it.
func RepoRoot() string {
	rootOnce.Do(func() {
		if r := os.Getenv("SYNAXI_REPO"); r != "" {
			root = r
			return
		}
		if wd, err := os.Getwd(); err == nil {
			if r, ok := findUp(wd, "go.work"); ok {
				root = r
				return
			}
		}
		root = "."
	})
	return root
}

func findUp(dir, name string) (string, bool) {
	for {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// CacheDir is where the pinned CLI is installed: <repo>/.cache/claude-code.
func CacheDir() string { return filepath.Join(RepoRoot(), ".cache", "claude-code") }

// Ensure returns the path of the pinned CLI, installing it with npm into
// CacheDir if it is missing or of another version. It holds an exclusive
// file lock while it checks and installs, so concurrent test processes
// install once.
func Ensure() (string, error) {
	ensureMu.Lock()
	defer ensureMu.Unlock()
	if ensureBin != "" {
		return ensureBin, nil
	}
	dir := CacheDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", dir, err)
	}
	var bin string
	err := withFileLock(dir+".lock", func() error {
		var err error
		bin, err = installed(dir)
		if err == nil {
			return nil
		}
		cmd := exec.Command("npm", "install", "--prefix", dir, "--no-audit", "--no-fund",
			"--loglevel=error", Package+"@"+Version)
		cmd.Stdin = nil
		out, runErr := cmd.CombinedOutput()
		if runErr != nil {
			return fmt.Errorf("npm install %s@%s: %w\n%s", Package, Version, runErr, tail(out, 4000))
		}
		bin, err = installed(dir)
		return err
	})
	if err != nil {
		return "", err
	}
	ensureBin = bin
	return bin, nil
}

// installed reports the CLI binary under dir if the pinned version is there
// and runs.
func installed(dir string) (string, error) {
	pkg := filepath.Join(dir, "node_modules", "@anthropic-ai", "claude-code", "package.json")
	data, err := os.ReadFile(pkg)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", pkg, err)
	}
	var meta struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(data, &meta); err != nil {
		return "", fmt.Errorf("parse %s: %w", pkg, err)
	}
	if meta.Version != Version {
		return "", fmt.Errorf("installed claude code is %s, want %s", meta.Version, Version)
	}
	bin := filepath.Join(dir, "node_modules", ".bin", "claude")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "--version").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("run %s --version: %w\n%s", bin, err, tail(out, 2000))
	}
	if !strings.Contains(string(out), Version) {
		return "", fmt.Errorf("%s --version printed %q, want %s", bin, strings.TrimSpace(string(out)), Version)
	}
	return bin, nil
}

// BuildPlugin runs `make build` in the repository once per process, under a
// file lock shared with other test processes, so plugin/bin holds freshly
// built binaries. `make e2e` builds first and sets SYNAXI_PLUGIN_BUILT=1,
// which skips this.
func BuildPlugin() error {
	buildOnce.Do(func() {
		if os.Getenv("SYNAXI_PLUGIN_BUILT") == "1" {
			return
		}
		r := RepoRoot()
		lockDir := filepath.Join(r, ".cache")
		if err := os.MkdirAll(lockDir, 0o755); err != nil {
			buildErr = fmt.Errorf("create %s: %w", lockDir, err)
			return
		}
		buildErr = withFileLock(filepath.Join(lockDir, "build.lock"), func() error {
			cmd := exec.Command("make", "-C", r, "build")
			out, err := cmd.CombinedOutput()
			if err != nil {
				return fmt.Errorf("make build: %w\n%s", err, tail(out, 4000))
			}
			return nil
		})
	})
	return buildErr
}

// Env is one isolated Claude Code installation: its own HOME, XDG
// directories and work directory.
type Env struct {
	Home    string   // temporary HOME; XDG_{CONFIG,STATE,DATA,CACHE}_HOME live under it
	Work    string   // git-initialised working directory the CLI runs in
	BaseURL string   // ANTHROPIC_BASE_URL
	Bin     string   // the pinned claude binary
	Vars    []string // extra KEY=VALUE pairs, applied last (they win)
}

// NewEnv prepares an Env whose client talks to baseURL. It installs the
// pinned CLI if needed and fails the test if that is impossible.
func NewEnv(t testing.TB, baseURL string) *Env {
	t.Helper()
	bin, err := Ensure()
	if err != nil {
		t.Fatalf("claudecli: %v", err)
	}
	e := &Env{Home: t.TempDir(), Work: t.TempDir(), BaseURL: baseURL, Bin: bin}
	for _, d := range []string{e.ConfigHome(), e.StateHome(), e.DataHome(), e.CacheHome()} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatalf("claudecli: %v", err)
		}
	}
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.name=synaxi e2e", "-c", "user.email=e2e@synaxi.invalid",
			"-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"}, args...)...)
		cmd.Dir = e.Work
		cmd.Env = e.Environ()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("claudecli: git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	git("init", "-q")
	git("commit", "-q", "--allow-empty", "-m", "empty")
	// Registered after t.TempDir's own removal, so they run before it: a
	// session leaves processes behind (the SessionEnd hook's detached
	// ingest drain) that write in the Env's directories after the client
	// has exited, and removing the HOME under them fails the test.
	t.Cleanup(func() { awaitStragglers(t, e.Home, stragglerWait) })
	if keep := os.Getenv(KeepStateVar); keep != "" {
		t.Cleanup(func() { keepState(t, e.StateDir(), keep) })
	}
	return e
}

// stragglerWait is how long a test's end waits for the processes its
// sessions left behind before it kills them.
const stragglerWait = 30 * time.Second

// awaitStragglers waits until no process but this one runs with HOME set
// to home, killing those still running after wait. It reads /proc; where
// there is none it returns at once.
func awaitStragglers(t testing.TB, home string, wait time.Duration) {
	deadline := time.Now().Add(wait)
	for {
		pids := withHome(home)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, pid := range pids {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Logf("claudecli: killed %d processes still running with HOME=%s after %s: %v", len(pids), home, wait, pids)
			time.Sleep(100 * time.Millisecond)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// withHome lists the processes other than this one whose environment sets
// HOME to home.
func withHome(home string) []int {
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	want := []byte("HOME=" + home)
	var out []int
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", d.Name(), "environ"))
		if err != nil {
			continue // gone, or not ours
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if bytes.Equal(kv, want) {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

// KeepStateVar names a directory into which, when set, every Env copies its
// synaxi state directory as the test ends (to <dir>/<test name>/<n>): the
// ledger and exports of a real-client run, for scripts/screenshots.sh.
const KeepStateVar = "SYNAXI_E2E_KEEP_STATE"

func keepState(t testing.TB, from, keep string) {
	name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
	for n := 1; ; n++ {
		to := filepath.Join(keep, name, strconv.Itoa(n))
		if _, err := os.Stat(to); err == nil {
			continue
		}
		if err := os.CopyFS(to, os.DirFS(from)); err != nil {
			t.Logf("claudecli: keep state %s: %v", from, err)
		}
		return
	}
}

// ConfigHome is the Env's XDG_CONFIG_HOME.
func (e *Env) ConfigHome() string { return filepath.Join(e.Home, ".config") }

// StateHome is the Env's XDG_STATE_HOME.
func (e *Env) StateHome() string { return filepath.Join(e.Home, ".local", "state") }

// DataHome is the Env's XDG_DATA_HOME.
func (e *Env) DataHome() string { return filepath.Join(e.Home, ".local", "share") }

// CacheHome is the Env's XDG_CACHE_HOME.
func (e *Env) CacheHome() string { return filepath.Join(e.Home, ".cache") }

// StateDir is synaxi's state directory in this Env ($XDG_STATE_HOME/synaxi).
func (e *Env) StateDir() string { return filepath.Join(e.StateHome(), "synaxi") }

// ClaudeDir is the client's own directory (~/.claude) in this Env.
func (e *Env) ClaudeDir() string { return filepath.Join(e.Home, ".claude") }

// Environ returns the full environment for a claude process (or a synaxi
// binary meant to see the same directories): the caller's environment minus
// every ANTHROPIC_*, CLAUDE*, SYNAXI_* and XDG_* variable and HOME, plus the
// recipe variables, plus Vars.
func (e *Env) Environ() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "HOME" || k == "IS_SANDBOX" || k == "DISABLE_TELEMETRY" ||
			strings.HasPrefix(k, "ANTHROPIC_") || strings.HasPrefix(k, "CLAUDE") ||
			strings.HasPrefix(k, "SYNAXI_") || strings.HasPrefix(k, "XDG_") {
			continue
		}
		env = append(env, kv)
	}
	env = append(env,
		"HOME="+e.Home,
		"XDG_CONFIG_HOME="+e.ConfigHome(),
		"XDG_STATE_HOME="+e.StateHome(),
		"XDG_DATA_HOME="+e.DataHome(),
		"XDG_CACHE_HOME="+e.CacheHome(),
		"ANTHROPIC_API_KEY=test",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_AUTOUPDATER=1",
		fmt.Sprintf("CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS=%d", PrintBGWaitCeiling.Milliseconds()),
	)
	if e.BaseURL != "" {
		env = append(env, "ANTHROPIC_BASE_URL="+e.BaseURL)
	}
	if os.Geteuid() == 0 {
		env = append(env, "IS_SANDBOX=1")
	}
	return mergeEnv(env, e.Vars)
}

// mergeEnv applies extra KEY=VALUE pairs over base, later ones winning, and
// keeps each key once.
func mergeEnv(base, extra []string) []string {
	all := append(append([]string(nil), base...), extra...)
	last := map[string]int{}
	for i, kv := range all {
		k, _, _ := strings.Cut(kv, "=")
		last[k] = i
	}
	out := make([]string, 0, len(last))
	for i, kv := range all {
		k, _, _ := strings.Cut(kv, "=")
		if last[k] == i {
			out = append(out, kv)
		}
	}
	return out
}

// InstallPlugin builds the binaries, adds the repository as a marketplace and
// installs synaxi@synaxi into this Env, failing the test on any error.
func (e *Env) InstallPlugin(t testing.TB) {
	t.Helper()
	if err := BuildPlugin(); err != nil {
		t.Fatalf("claudecli: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, args := range [][]string{
		{"plugin", "marketplace", "add", RepoRoot()},
		{"plugin", "install", "synaxi@synaxi"},
	} {
		res, err := e.Run(ctx, args...)
		if err != nil {
			t.Fatalf("claudecli: claude %s: %v", strings.Join(args, " "), err)
		}
		if res.ExitCode != 0 {
			t.Fatalf("claudecli: claude %s: exit %d\nstdout:\n%s\nstderr:\n%s",
				strings.Join(args, " "), res.ExitCode, res.Stdout, res.Stderr)
		}
	}
}

// Result is what a finished process left behind.
type Result struct {
	Stdout, Stderr string
	ExitCode       int
}

// Run runs the CLI with args in the work directory and waits for it. A
// non-zero exit is reported in Result.ExitCode, not as an error; the error
// is for a process that could not start or was stopped by ctx.
//
// The CLI runs in its own process group. When it exits, or when ctx ends,
// whatever is left of that group (hooks, MCP servers) is killed, so nothing
// keeps writing into the Env's directories after Run returns. Daemons that
// detach into a session of their own (setsid) are not touched.
func (e *Env) Run(ctx context.Context, args ...string) (*Result, error) {
	return e.RunProgram(ctx, e.Bin, args...)
}

// RunProgram runs any program (a synaxi binary, say) in the work directory
// with the Env's environment, with Run's semantics.
func (e *Env) RunProgram(ctx context.Context, prog string, args ...string) (*Result, error) {
	name := filepath.Base(prog)
	// Files, not pipes: a straggler holding the output open cannot delay
	// Wait, and the group is killed as soon as the program itself exits.
	stdout, err := os.CreateTemp("", "claudecli-stdout-*")
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", name, err)
	}
	defer os.Remove(stdout.Name())
	defer stdout.Close()
	stderr, err := os.CreateTemp("", "claudecli-stderr-*")
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", name, err)
	}
	defer os.Remove(stderr.Name())
	defer stderr.Close()

	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Dir = e.Work
	cmd.Env = e.Environ()
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	runErr := cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // stragglers; ESRCH when none
	}
	res := &Result{Stdout: readAll(stdout), Stderr: readAll(stderr), ExitCode: cmd.ProcessState.ExitCode()}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return res, fmt.Errorf("run %s: %w", name, ctxErr)
	}
	var exitErr *exec.ExitError
	if runErr != nil && !errors.As(runErr, &exitErr) {
		return res, fmt.Errorf("run %s: %w", name, runErr)
	}
	return res, nil
}

func readAll(f *os.File) string {
	data, _ := os.ReadFile(f.Name())
	return string(data)
}

// withFileLock runs fn holding an exclusive flock on path (created if
// missing). It waits as long as it takes: installs and builds are slow, and
// the holder is another test process doing the same work.
func withFileLock(path string, fn func() error) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("open lock %s: %w", path, err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("lock %s: %w", path, err)
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN) //nolint:errcheck // closing releases it too
	return fn()
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
