// Package marketplace installs synaxi into a test's Claude Code the way a
// user installs it from the marketplace, fully offline.
//
// The pieces, each usable on its own:
//
//   - BuildRelease runs the repository's own release script (scripts/release.sh)
//     for the host platform on a copy of the source tree and returns the
//     archives it made. Results are cached under <repo>/.cache/e2e-release,
//     keyed by the content of the source tree and the version, under a file
//     lock, so parallel test binaries build once.
//   - NewRepo makes a git repository holding a copy of the marketplace
//     (.claude-plugin/ and plugin/, tracked and untracked-but-not-ignored files
//     only, so no built binary) whose plugin/checksums.txt lists the archives of
//     a Release, and, if asked, another plugin version.
//   - ServeGit serves such a repository over git's smart HTTP protocol on
//     loopback (`git http-backend` behind net/http/cgi).
//   - ServeRelease serves a Release's archives on loopback with fault modes (a
//     hung server, a throttled link, a truncated archive, a wrong checksum,
//     404, a connection killed halfway) and records every request.
//   - Install runs `claude plugin marketplace add <url>` and
//     `claude plugin install synaxi@synaxi` in a claudecli.Env.
//
// New puts them together: one release server, one git marketplace and a
// fresh Env whose launcher downloads from that server (SYNAXI_RELEASE_BASE).
//
// Invariants: nothing here writes into the checkout except the cache under
// .cache/e2e-release; every server and temporary directory ends with its test.
package marketplace

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/synaxi/synaxi/e2e/claudecli"
)

// Archive is one release archive on disk.
type Archive struct {
	Name   string // synaxi_<version>_<os>_<arch>.tar.gz
	Path   string // absolute path of the file
	SHA256 string // hex
	Size   int64
}

// Release is the output of one run of the release script.
type Release struct {
	Version  string
	Dir      string    // holds the archives and SHA256SUMS
	Archives []Archive // every archive the script made, sorted by name
}

// Host returns the archive for the platform the tests run on.
func (r *Release) Host() Archive {
	want := fmt.Sprintf("synaxi_%s_%s_%s.tar.gz", r.Version, runtime.GOOS, runtime.GOARCH)
	for _, a := range r.Archives {
		if a.Name == want {
			return a
		}
	}
	panic("marketplace: release has no " + want)
}

// Checksums is the content of plugin/checksums.txt for this release.
func (r *Release) Checksums() string {
	var b strings.Builder
	b.WriteString("# SHA-256 checksums of the release archives (test release).\n")
	for _, a := range r.Archives {
		fmt.Fprintf(&b, "%s  %s\n", a.SHA256, a.Name)
	}
	return b.String()
}

// PluginVersion is the version in the checkout's plugin/.claude-plugin/plugin.json.
func PluginVersion(t testing.TB) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(claudecli.RepoRoot(), "plugin", ".claude-plugin", "plugin.json"))
	if err != nil {
		t.Fatalf("marketplace: %v", err)
	}
	_, rest, ok := strings.Cut(string(data), `"version"`)
	if ok {
		if _, rest, ok = strings.Cut(rest, `"`); ok {
			if v, _, ok := strings.Cut(rest, `"`); ok {
				return v
			}
		}
	}
	t.Fatalf("marketplace: no version in plugin.json")
	return ""
}

// sourceFiles lists the checkout's files that git tracks or would track
// (untracked but not ignored), under the given paths (all when none).
func sourceFiles(t testing.TB, paths ...string) []string {
	t.Helper()
	args := append([]string{"-C", claudecli.RepoRoot(), "ls-files", "-z", "-co", "--exclude-standard", "--"}, paths...)
	out, err := exec.Command("git", args...).Output()
	if err != nil {
		t.Fatalf("marketplace: git ls-files: %v", err)
	}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f == "" {
			continue
		}
		if _, err := os.Lstat(filepath.Join(claudecli.RepoRoot(), f)); err != nil {
			continue // deleted in the work tree
		}
		files = append(files, f)
	}
	slices.Sort(files)
	return files
}

// copyFiles copies the named checkout files into dir, keeping modes.
func copyFiles(t testing.TB, files []string, dir string) {
	t.Helper()
	root := claudecli.RepoRoot()
	for _, f := range files {
		src, dst := filepath.Join(root, f), filepath.Join(dir, f)
		fi, err := os.Lstat(src)
		if err != nil {
			t.Fatalf("marketplace: %v", err)
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatalf("marketplace: %v", err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(src)
			if err == nil {
				err = os.Symlink(target, dst)
			}
			if err != nil {
				t.Fatalf("marketplace: %v", err)
			}
			continue
		}
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatalf("marketplace: %v", err)
		}
		if err := os.WriteFile(dst, data, fi.Mode().Perm()); err != nil {
			t.Fatalf("marketplace: %v", err)
		}
	}
}

// gitCommitAll makes dir a git repository with one commit of everything in it.
func gitCommitAll(t testing.TB, dir string) {
	t.Helper()
	for _, args := range [][]string{
		{"init", "-q"},
		{"add", "-A"},
		{"commit", "-q", "-m", "synaxi test copy"},
	} {
		cmd := exec.Command("git", append([]string{"-c", "user.name=synaxi e2e", "-c", "user.email=e2e@synaxi.invalid",
			"-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_DATE=2026-01-01T00:00:00Z",
			"GIT_COMMITTER_DATE=2026-01-01T00:00:00Z")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("marketplace: git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
		}
	}
}

// BuildRelease runs scripts/release.sh for the host platform on a copy of
// the checkout's source tree and returns what it made. version is the
// plugin version the archives are named after ("" for plugin.json's). The
// result is cached by the source tree's content and the version, so only
// the first call in any test process after a change builds (about a minute
// on the 2-core machine).
func BuildRelease(t testing.TB, version string) *Release {
	t.Helper()
	if version == "" {
		version = PluginVersion(t)
	}
	files := sourceFiles(t)
	h := sha256.New()
	fmt.Fprintf(h, "version %s\nplatform %s/%s\n", version, runtime.GOOS, runtime.GOARCH)
	for _, f := range files {
		if !inArchive(f) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(claudecli.RepoRoot(), f))
		if err != nil {
			continue // a symlink to a directory, say
		}
		sum := sha256.Sum256(data)
		fmt.Fprintf(h, "%s %x\n", f, sum)
	}
	key := hex.EncodeToString(h.Sum(nil))[:16]
	cache := filepath.Join(claudecli.RepoRoot(), ".cache", "e2e-release")
	out := filepath.Join(cache, version+"-"+key)
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatalf("marketplace: %v", err)
	}
	lock := flock.New(filepath.Join(cache, "build.lock"))
	if err := lock.Lock(); err != nil {
		t.Fatalf("marketplace: lock %s: %v", lock.Path(), err)
	}
	defer lock.Unlock() //nolint:errcheck // closing the process releases it too
	if _, err := os.Stat(filepath.Join(out, "SHA256SUMS")); err != nil {
		buildRelease(t, files, version, out)
	}
	return readRelease(t, version, out)
}

// inArchive reports whether a checkout file can change what the release
// script makes: the tests, docs, benchmarks and the plugin directory (whose
// version is passed explicitly) cannot, so editing them reuses the cache.
func inArchive(f string) bool {
	for _, dir := range []string{"e2e/", "docs/", "bench/", "plugin/"} {
		if strings.HasPrefix(f, dir) {
			return false
		}
	}
	return true
}

func buildRelease(t testing.TB, files []string, version, out string) {
	t.Helper()
	src, err := os.MkdirTemp(filepath.Dir(out), ".src-")
	if err != nil {
		t.Fatalf("marketplace: %v", err)
	}
	defer os.RemoveAll(src)
	copyFiles(t, files, src)
	gitCommitAll(t, src)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "nice", "-n", "10", "bash", "scripts/release.sh")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "PLATFORMS="+runtime.GOOS+"/"+runtime.GOARCH, "RELEASE_VERSION="+version)
	start := time.Now()
	if log, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("marketplace: scripts/release.sh: %v\n%s", err, log)
	}
	t.Logf("marketplace: scripts/release.sh built version %s for %s/%s in %s",
		version, runtime.GOOS, runtime.GOARCH, time.Since(start).Round(time.Second))
	tmp := out + ".tmp"
	_ = os.RemoveAll(tmp)
	if err := os.Rename(filepath.Join(src, "dist"), tmp); err != nil {
		t.Fatalf("marketplace: %v", err)
	}
	if err := os.Rename(tmp, out); err != nil {
		t.Fatalf("marketplace: %v", err)
	}
}

func readRelease(t testing.TB, version, dir string) *Release {
	t.Helper()
	sums, err := os.ReadFile(filepath.Join(dir, "SHA256SUMS"))
	if err != nil {
		t.Fatalf("marketplace: %v", err)
	}
	r := &Release{Version: version, Dir: dir}
	for _, line := range strings.Split(strings.TrimSpace(string(sums)), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			t.Fatalf("marketplace: bad SHA256SUMS line %q", line)
		}
		path := filepath.Join(dir, strings.TrimPrefix(f[1], "*"))
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatalf("marketplace: %v", err)
		}
		r.Archives = append(r.Archives, Archive{Name: filepath.Base(path), Path: path, SHA256: f[0], Size: fi.Size()})
	}
	return r
}

// RepoOptions change the test copy of the marketplace.
type RepoOptions struct {
	// Version, when set, replaces the plugin version in plugin.json (the
	// archives of rel must carry the same version).
	Version string
}

// NewRepo makes a git repository in a temporary directory holding the
// marketplace (.claude-plugin/ and plugin/ as the checkout has them, without
// built binaries) with plugin/checksums.txt listing rel's archives. It
// returns the repository's directory.
func NewRepo(t testing.TB, rel *Release, opts RepoOptions) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "synaxi")
	copyFiles(t, sourceFiles(t, ".claude-plugin", "plugin"), dir)
	for _, bin := range mustGlob(t, filepath.Join(dir, "plugin", "bin", "synaxi*")) {
		if filepath.Base(bin) != "synaxi-run" {
			t.Fatalf("marketplace: %s is a built binary and must not be in the marketplace copy", bin)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "plugin", "checksums.txt"), []byte(rel.Checksums()), 0o644); err != nil {
		t.Fatalf("marketplace: %v", err)
	}
	if opts.Version != "" {
		manifest := filepath.Join(dir, "plugin", ".claude-plugin", "plugin.json")
		data, err := os.ReadFile(manifest)
		if err != nil {
			t.Fatalf("marketplace: %v", err)
		}
		old := PluginVersion(t)
		data = bytes.Replace(data, []byte(`"version": "`+old+`"`), []byte(`"version": "`+opts.Version+`"`), 1)
		if !bytes.Contains(data, []byte(opts.Version)) {
			t.Fatalf("marketplace: could not set version %s in %s", opts.Version, manifest)
		}
		if err := os.WriteFile(manifest, data, 0o644); err != nil {
			t.Fatalf("marketplace: %v", err)
		}
	}
	gitCommitAll(t, dir)
	return dir
}

// Commit records every change in the repository made by NewRepo (a version
// bump for an update test, say) as a new commit.
func Commit(t testing.TB, dir, message string) {
	t.Helper()
	for _, args := range [][]string{{"add", "-A"}, {"commit", "-q", "-m", message}} {
		cmd := exec.Command("git", append([]string{"-c", "user.name=synaxi e2e", "-c", "user.email=e2e@synaxi.invalid",
			"-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("marketplace: git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

func mustGlob(t testing.TB, pattern string) []string {
	t.Helper()
	m, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatalf("marketplace: %v", err)
	}
	return m
}

// Install adds the marketplace at source (a git URL or a directory) to env's
// Claude Code and installs synaxi@synaxi from it, failing the test on any
// error. It returns the two commands' combined output.
func Install(t testing.TB, env *claudecli.Env, source string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var log strings.Builder
	for _, args := range [][]string{
		{"plugin", "marketplace", "add", source},
		{"plugin", "install", "synaxi@synaxi"},
	} {
		res, err := env.Run(ctx, args...)
		if err != nil {
			t.Fatalf("marketplace: claude %s: %v", strings.Join(args, " "), err)
		}
		fmt.Fprintf(&log, "$ claude %s\n%s%s", strings.Join(args, " "), res.Stdout, res.Stderr)
		if res.ExitCode != 0 {
			t.Fatalf("marketplace: claude %s: exit %d\n%s", strings.Join(args, " "), res.ExitCode, log.String())
		}
	}
	return log.String()
}

// Options shape the rig New builds.
type Options struct {
	// APIURL is the Env's ANTHROPIC_BASE_URL (a fakeapi server, say).
	APIURL string
	// Version is the plugin version to release and put in the marketplace
	// ("" for plugin.json's).
	Version string
}

// Rig is a fresh user's machine with synaxi's marketplace and release server
// on loopback.
type Rig struct {
	Release  *Release
	Releases *ReleaseServer
	RepoDir  string // the marketplace's git repository
	GitURL   string // its smart-HTTP clone URL
	Env      *claudecli.Env
}

// New builds (or reuses) the host release, serves it and a marketplace made
// for it, and prepares a fresh Env whose launcher downloads from that
// server. Nothing is installed yet: call Rig.Install.
func New(t testing.TB, opts Options) *Rig {
	t.Helper()
	rel := BuildRelease(t, opts.Version)
	r := &Rig{Release: rel, Releases: ServeRelease(t, rel)}
	r.RepoDir = NewRepo(t, rel, RepoOptions{Version: opts.Version})
	r.GitURL = ServeGit(t, r.RepoDir)
	r.Env = claudecli.NewEnv(t, opts.APIURL)
	r.Env.Vars = append(r.Env.Vars, "SYNAXI_RELEASE_BASE="+r.Releases.Base())
	return r
}

// Install adds the rig's marketplace and installs synaxi@synaxi from it.
func (r *Rig) Install(t testing.TB) string {
	t.Helper()
	return Install(t, r.Env, r.GitURL)
}

// PluginData is where Claude Code keeps synaxi's persistent data in this
// Env (CLAUDE_PLUGIN_DATA for synaxi@synaxi).
func (r *Rig) PluginData() string {
	return filepath.Join(r.Env.ClaudeDir(), "plugins", "data", "synaxi-synaxi")
}

// PluginRoot is the installed plugin's directory (CLAUDE_PLUGIN_ROOT) for
// version ("" for the release's).
func (r *Rig) PluginRoot(version string) string {
	if version == "" {
		version = r.Release.Version
	}
	return filepath.Join(r.Env.ClaudeDir(), "plugins", "cache", "synaxi", "synaxi", version)
}
