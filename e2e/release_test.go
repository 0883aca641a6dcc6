package e2e_test

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/synaxi/synaxi/e2e/claudecli"
)

// releaseVersion is the plugin version the release tests build archives for.
const releaseVersion = "9.9.9-release-test"

// mapLanguages is how many languages every release archive's synaxi-mapgen
// parses: the twelve its extension table names, each through tree-sitter.
const mapLanguages = 12

// releasePlatforms are the platforms a release carries, as release.sh and the
// release workflow name them.
var releasePlatforms = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64"}

// releaseScript runs scripts/release.sh with args and the variables in env
// added to this process's environment; it returns stdout+stderr and the error.
func releaseScript(t *testing.T, timeout time.Duration, env []string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	root := claudecli.RepoRoot()
	cmd := exec.CommandContext(ctx, filepath.Join(root, "scripts", "release.sh"), args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// releaseCommands lists the binaries every archive must hold, from the Makefile.
func releaseCommands(t *testing.T) []string {
	t.Helper()
	cmd := exec.Command("make", "--no-print-directory", "-s", "print-commands")
	cmd.Dir = claudecli.RepoRoot()
	out, err := cmd.Output()
	require.NoError(t, err, "make print-commands")
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		require.Len(t, f, 2, "make print-commands line %q", line)
		names = append(names, filepath.Base(f[0]))
	}
	require.NotEmpty(t, names)
	return names
}

func sha256File(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// untar extracts a .tar.gz into dir and returns its entries' names and modes.
func untar(t *testing.T, archive, dir string) map[string]os.FileMode {
	t.Helper()
	f, err := os.Open(archive)
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err, "%s is not gzip", archive)
	tr := tar.NewReader(zr)
	entries := map[string]os.FileMode{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err, "read %s", archive)
		name := strings.TrimSuffix(h.Name, "/")
		require.False(t, filepath.IsAbs(name) || slices.Contains(strings.Split(name, "/"), ".."), "unsafe entry %q", h.Name)
		entries[name] = h.FileInfo().Mode()
		dst := filepath.Join(dir, name)
		switch h.Typeflag {
		case tar.TypeDir:
			require.NoError(t, os.MkdirAll(dst, 0o755))
		case tar.TypeReg:
			require.NoError(t, os.MkdirAll(filepath.Dir(dst), 0o755))
			out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, h.FileInfo().Mode().Perm())
			require.NoError(t, err)
			_, err = io.Copy(out, tr)
			require.NoError(t, err)
			require.NoError(t, out.Close())
		default:
			t.Fatalf("%s: entry %q has type %c; an archive holds directories and files only", archive, h.Name, h.Typeflag)
		}
	}
	return entries
}

// parsedLanguages reads a LANGUAGES file: the languages marked parsed, and
// those marked otherwise.
func parsedLanguages(t *testing.T, path string) (parsed, missing []string) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		fields := strings.Fields(line)
		require.GreaterOrEqual(t, len(fields), 2, "LANGUAGES line %q", line)
		if fields[1] == "parsed" {
			parsed = append(parsed, fields[0])
		} else {
			missing = append(missing, fields[0])
		}
	}
	require.NoError(t, sc.Err())
	return parsed, missing
}

// TestReleaseArchive builds this machine's release archive twice, in two
// output directories, through scripts/release.sh as `make release` and the
// release workflow do, and checks: the two are byte-identical; the archive is
// one directory of its own name holding every binary, executable; LANGUAGES
// lists the twelve map languages as parsed, exactly what the archive's own
// synaxi-mapgen reports; `release.sh checksums` writes the "<sha256>  <archive>"
// line the launcher verifies against.
//
// Two builds with a warm Go cache took 80 to 175 s on the 2 shared cores of the
// development machine; -short skips it (make test runs it).
func TestReleaseArchive(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the release archive twice (one to three minutes); make test runs it")
	}
	host := runtime.GOOS + "/" + runtime.GOARCH
	if !slices.Contains(releasePlatforms, host) {
		t.Skipf("no release archive for %s", host)
	}
	if _, err := exec.LookPath("cc"); err != nil && os.Getenv("CC") == "" {
		t.Skip("no C compiler: a release archive needs cgo for the map languages")
	}
	name := "synaxi_" + releaseVersion + "_" + strings.ReplaceAll(host, "/", "_")
	var dists [2]string
	for i := range dists {
		dists[i] = t.TempDir()
		start := time.Now()
		out, err := releaseScript(t, 15*time.Minute,
			[]string{"PLATFORMS=" + host, "RELEASE_VERSION=" + releaseVersion, "RELEASE_DIST=" + dists[i]}, "build")
		require.NoError(t, err, "release.sh build:\n%s", out)
		t.Logf("build %d: %s", i+1, time.Since(start).Round(time.Second))
		assert.Contains(t, out, host+": built ")
	}
	a, b := filepath.Join(dists[0], name+".tar.gz"), filepath.Join(dists[1], name+".tar.gz")
	sum := sha256File(t, a)
	assert.Equal(t, sum, sha256File(t, b), "two builds of one source and version differ")
	st, err := os.Stat(a)
	require.NoError(t, err)
	t.Logf("%s: %d bytes, sha256 %s", filepath.Base(a), st.Size(), sum)

	// One directory of the archive's name: every binary (executable),
	// LANGUAGES, README.md; nothing beside it.
	x := t.TempDir()
	entries := untar(t, a, x)
	for e, mode := range entries {
		assert.True(t, e == name || strings.HasPrefix(e, name+"/"), "entry %q outside %s/", e, name)
		if strings.HasPrefix(filepath.Base(e), "synaxi") {
			assert.Equal(t, os.FileMode(0o755), mode.Perm(), "%s", e)
		}
	}
	for _, c := range releaseCommands(t) {
		assert.Contains(t, entries, name+"/"+c, "the archive has no %s", c)
	}
	assert.Contains(t, entries, name+"/README.md")

	parsed, missing := parsedLanguages(t, filepath.Join(x, name, "LANGUAGES"))
	assert.Len(t, parsed, mapLanguages, "LANGUAGES lists %v as parsed", parsed)
	assert.Empty(t, missing, "LANGUAGES lists languages this archive cannot parse")
	out, err := exec.Command(filepath.Join(x, name, "synaxi-mapgen"), "languages", "--json").Output()
	require.NoError(t, err, "the archive's synaxi-mapgen languages --json")
	var rep struct{ Parsed, Missing []string }
	require.NoError(t, json.Unmarshal(out, &rep))
	assert.Equal(t, rep.Parsed, parsed, "LANGUAGES and the archive's synaxi-mapgen disagree")
	assert.Empty(t, rep.Missing)

	// The checksum line the launcher reads.
	list := filepath.Join(t.TempDir(), "checksums.txt")
	cout, err := releaseScript(t, 5*time.Minute,
		[]string{"RELEASE_VERSION=" + releaseVersion, "RELEASE_DIST=" + dists[0], "RELEASE_CHECKSUMS=" + list}, "checksums")
	require.NoError(t, err, "release.sh checksums:\n%s", cout)
	written, err := os.ReadFile(list)
	require.NoError(t, err)
	assert.Contains(t, strings.Split(string(written), "\n"), sum+"  "+name+".tar.gz")
}

// fakeArchive writes dist/<name>.tar.gz: every command as a small file under
// top/, and a LANGUAGES file with the given body.
func fakeArchive(t *testing.T, dist, name, top, languages string) {
	t.Helper()
	files := map[string]string{"LANGUAGES": languages}
	for _, c := range releaseCommands(t) {
		files[c] = "#!/bin/sh\n"
	}
	require.NoError(t, os.WriteFile(filepath.Join(dist, name+".tar.gz"), buildArchive(t, top, files), 0o644))
}

// TestReleaseChecksumsRefuses: `release.sh checksums` writes no checksum for
// an archive that would not serve every language, or that breaks the
// launcher's layout, and says what is wrong.
func TestReleaseChecksumsRefuses(t *testing.T) {
	name := "synaxi_" + releaseVersion + "_linux_amd64"
	goOnly := "# built without cgo\n" +
		"bash  missing (this build has no cgo)  .sh\n" +
		"go    parsed  .go\n" +
		"rust  missing (this build has no cgo)  .rs\n"
	cases := []struct {
		what, top, languages, want string
	}{
		{"a Go-only archive", name, goOnly, "LANGUAGES lacks bash"},
		{"a second top directory", "synaxi", "go parsed .go\n", "want the single directory " + name},
	}
	for _, tc := range cases {
		t.Run(tc.what, func(t *testing.T) {
			dist := t.TempDir()
			fakeArchive(t, dist, name, tc.top, tc.languages)
			list := filepath.Join(dist, "checksums.txt")
			out, err := releaseScript(t, 5*time.Minute,
				[]string{"RELEASE_VERSION=" + releaseVersion, "RELEASE_DIST=" + dist, "RELEASE_CHECKSUMS=" + list, "RELEASE_GO_ONLY="}, "checksums")
			require.Error(t, err, "release.sh checksums accepted %s:\n%s", tc.what, out)
			assert.Contains(t, out, tc.want)
			assert.NoFileExists(t, list, "a checksum list was written for a refused archive")
		})
	}
}

// TestReleaseSkipsWithoutCompiler: a platform this machine has no C compiler
// for is not packed Go-only. Asked for by name, the build fails and says what
// it needs.
func TestReleaseSkipsWithoutCompiler(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("checks a darwin platform from a linux machine")
	}
	dist := t.TempDir()
	out, err := releaseScript(t, 5*time.Minute,
		[]string{"PLATFORMS=darwin/arm64", "RELEASE_VERSION=" + releaseVersion, "RELEASE_DIST=" + dist, "RELEASE_GO_ONLY=", "CC_darwin_arm64="}, "build")
	require.Error(t, err, "release.sh build made a darwin archive on linux:\n%s", out)
	assert.Contains(t, out, "darwin/arm64: skipped, needs a macOS runner")
	matches, _ := filepath.Glob(filepath.Join(dist, "*.tar.gz"))
	assert.Empty(t, matches, "an archive was made")
}

// TestReleaseWorkflow reads .github/workflows/release.yml: a tag v* starts it;
// the build matrix has one native runner per platform release.sh knows, each
// building its own platform through the script and checking a second build is
// identical; the publish job needs every build, verifies all four archives,
// creates the release, and only then commits plugin.json's version and the
// checksums together.
func TestReleaseWorkflow(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(claudecli.RepoRoot(), ".github", "workflows", "release.yml"))
	require.NoError(t, err)
	type step struct {
		Name string            `yaml:"name"`
		Uses string            `yaml:"uses"`
		Run  string            `yaml:"run"`
		With map[string]string `yaml:"with"`
		Env  map[string]string `yaml:"env"`
	}
	type job struct {
		RunsOn   string            `yaml:"runs-on"`
		Needs    any               `yaml:"needs"`
		Env      map[string]string `yaml:"env"`
		Strategy struct {
			Matrix struct {
				Include []map[string]string `yaml:"include"`
			} `yaml:"matrix"`
		} `yaml:"strategy"`
		Permissions map[string]string `yaml:"permissions"`
		Steps       []step            `yaml:"steps"`
	}
	var wf struct {
		On struct {
			Push struct {
				Tags []string `yaml:"tags"`
			} `yaml:"push"`
		} `yaml:"on"`
		Permissions map[string]string `yaml:"permissions"`
		Jobs        map[string]job    `yaml:"jobs"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &wf), "release.yml")

	assert.Equal(t, []string{"v*"}, wf.On.Push.Tags, "a tag v* starts a release")
	assert.Equal(t, "read", wf.Permissions["contents"], "only the publish job may write")

	build, ok := wf.Jobs["build"]
	require.True(t, ok, "no build job")
	var platforms []string
	for _, m := range build.Strategy.Matrix.Include {
		p, runner := m["platform"], m["runner"]
		platforms = append(platforms, p)
		var native bool
		switch p {
		case "linux/amd64":
			native = strings.HasPrefix(runner, "ubuntu-") && !strings.HasSuffix(runner, "-arm")
		case "linux/arm64":
			native = strings.HasPrefix(runner, "ubuntu-") && strings.HasSuffix(runner, "-arm")
		case "darwin/amd64":
			native = strings.HasPrefix(runner, "macos-") && strings.HasSuffix(runner, "-intel")
		case "darwin/arm64":
			native = strings.HasPrefix(runner, "macos-") && !strings.Contains(runner, "intel") && !strings.Contains(runner, "large")
		}
		assert.True(t, native, "%s builds on %q, not a native runner", p, runner)
	}
	assert.ElementsMatch(t, releasePlatforms, platforms, "the build matrix")
	assert.Equal(t, "${{ matrix.runner }}", build.RunsOn)
	assert.Equal(t, "${{ matrix.platform }}", build.Env["PLATFORMS"], "each runner builds its own platform")
	var builds int
	for _, s := range build.Steps {
		builds += strings.Count(s.Run, "scripts/release.sh build")
	}
	assert.Equal(t, 2, builds, "the build job builds through release.sh, twice (the second to compare)")

	// Every platform release.sh builds by default is in the matrix.
	script, err := os.ReadFile(filepath.Join(claudecli.RepoRoot(), "scripts", "release.sh"))
	require.NoError(t, err)
	assert.Contains(t, string(script), `all_platforms="`+strings.Join(releasePlatforms, " ")+`"`)

	pub, ok := wf.Jobs["publish"]
	require.True(t, ok, "no publish job")
	assert.Contains(t, pub.Needs, "build")
	assert.Equal(t, "write", pub.Permissions["contents"])
	stepAt := func(what string) int {
		for i, s := range pub.Steps {
			if strings.Contains(s.Run, what) {
				return i
			}
		}
		t.Errorf("the publish job never runs %q", what)
		return -1
	}
	checks, create, bump := stepAt("scripts/release.sh checksums"), stepAt("gh release create"), stepAt("scripts/release.sh bump")
	if checks >= 0 {
		assert.ElementsMatch(t, releasePlatforms, strings.Fields(pub.Steps[checks].Env["PLATFORMS"]), "checksums requires every platform's archive")
	}
	assert.Less(t, checks, create, "archives are verified before the release is created")
	assert.Less(t, create, bump, "the release exists before the version that names it is committed")
	if bump >= 0 {
		commit := pub.Steps[bump].Run
		assert.Contains(t, commit, "git add plugin/checksums.txt plugin/.claude-plugin/plugin.json", "one commit carries both")
		assert.Equal(t, 1, strings.Count(commit, "commit -m"), "one commit")
	}
}

// TestReleaseNotesAndBump runs the publish job's two repository steps in a
// small git repository holding the script and the manifest: `notes` lists
// the commits since the previous v* tag (and only those), `bump` changes the
// manifest's version and nothing else.
func TestReleaseNotesAndBump(t *testing.T) {
	root := claudecli.RepoRoot()
	dir := t.TempDir()
	for _, f := range []string{"scripts/release.sh", "plugin/.claude-plugin/plugin.json"} {
		b, err := os.ReadFile(filepath.Join(root, f))
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), b, 0o755))
	}
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	git("init", "-q")
	git("add", ".")
	git("commit", "-q", "-m", "first")
	git("tag", "-a", "v0.1.0", "-m", "v0.1.0")
	git("commit", "-q", "--allow-empty", "-m", "proxy: a fix")
	git("commit", "-q", "--allow-empty", "-m", "maps: a feature")
	git("tag", "-a", "v0.2.0", "-m", "v0.2.0")

	run := func(env []string, args ...string) string {
		t.Helper()
		cmd := exec.Command(filepath.Join(dir, "scripts", "release.sh"), args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "release.sh %v: %s", args, out)
		return string(out)
	}
	notes := run([]string{"RELEASE_DIST=" + t.TempDir()}, "notes", "v0.2.0")
	assert.Contains(t, notes, "## synaxi v0.2.0")
	assert.Contains(t, notes, "Changes since v0.1.0:")
	assert.Regexp(t, `(?m)^- proxy: a fix \([0-9a-f]+\)$`, notes)
	assert.Regexp(t, `(?m)^- maps: a feature \([0-9a-f]+\)$`, notes)
	assert.NotContains(t, notes, "- first", "a commit of the previous release")
	first := run([]string{"RELEASE_DIST=" + t.TempDir()}, "notes", "v0.1.0")
	assert.Contains(t, first, "first release")
	assert.Contains(t, first, "- first (")

	manifest := filepath.Join(dir, "plugin", ".claude-plugin", "plugin.json")
	before, err := os.ReadFile(manifest)
	require.NoError(t, err)
	run([]string{"RELEASE_VERSION=0.2.0"}, "bump")
	after, err := os.ReadFile(manifest)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(after, &m), "plugin.json after bump")
	assert.Equal(t, "0.2.0", m["version"])
	bl, al := strings.Split(string(before), "\n"), strings.Split(string(after), "\n")
	require.Len(t, al, len(bl))
	var changed []string
	for i := range bl {
		if bl[i] != al[i] {
			changed = append(changed, al[i])
		}
	}
	assert.Equal(t, []string{`  "version": "0.2.0",`}, changed, "bump changes the version line only")
}
