package launcher

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseFailure(t *testing.T) {
	f, err := ParseFailure("1.0.0", []byte("1764000000 2 download\nsynaxi could not download its programs: x.\n"))
	require.NoError(t, err)
	assert.Equal(t, Failure{Version: "1.0.0", When: time.Unix(1764000000, 0), Attempts: 2, Kind: "download",
		Sentence: "synaxi could not download its programs: x."}, f)

	for name, text := range map[string]string{
		"two fields": "1764000000 2\nx",
		"epoch":      "soon 2 download\nx",
		"attempts":   "1764000000 two download\nx",
		"empty":      "",
	} {
		_, err := ParseFailure("1.0.0", []byte(text))
		assert.Error(t, err, name)
	}
}

func FuzzParseFailure(f *testing.F) {
	f.Add([]byte("1764000000 2 download\nsentence\n"))
	f.Add([]byte("1 1 checksum\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if fl, err := ParseFailure("v", data); err == nil {
			assert.Equal(t, "v", fl.Version)
		}
	})
}

func TestFailuresSkipsInstalledAndMalformed(t *testing.T) {
	bin := t.TempDir()
	write := func(name, text string) {
		require.NoError(t, os.WriteFile(filepath.Join(bin, name), []byte(text), 0o600))
	}
	write(".1.0.0.failed", "1764000000 1 checksum\nsynaxi refused the archive.\n")
	write(".1.1.0.failed", "1764000000 1 download\nsynaxi could not download.\n")
	require.NoError(t, os.Mkdir(filepath.Join(bin, "1.1.0"), 0o700)) // installed since
	write(".1.2.0.failed", "garbage\n")
	got := Failures(bin)
	require.Len(t, got, 1)
	assert.Equal(t, "1.0.0", got[0].Version)
	assert.Equal(t, KindChecksum, got[0].Kind)
}

// cacheLayout makes DATA/bin and Claude Code's plugin cache with copies of
// the given versions; it returns bin and the cache directory.
func cacheLayout(t *testing.T, copies ...string) (string, string) {
	t.Helper()
	home := t.TempDir()
	cache := filepath.Join(home, "plugins", "cache", "synaxi", "synaxi")
	for _, v := range copies {
		require.NoError(t, os.MkdirAll(filepath.Join(cache, v), 0o700))
	}
	bin := filepath.Join(home, "plugins", "data", "synaxi-synaxi", "bin")
	require.NoError(t, os.MkdirAll(bin, 0o700))
	return bin, cache
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func TestInstalledSwitchesAndPrunes(t *testing.T) {
	bin, cache := cacheLayout(t, "1.1.0", "1.3.0")
	for _, d := range []string{"1.0.0", "1.1.0", "1.2.0", "1.3.0", ".1.0.0.stage.abc"} {
		require.NoError(t, os.MkdirAll(filepath.Join(bin, d), 0o700))
	}
	for _, f := range []string{".1.0.0.part", ".1.0.0.failed", ".1.1.0.failed", "notes"} {
		require.NoError(t, os.WriteFile(filepath.Join(bin, f), nil, 0o600))
	}
	require.NoError(t, os.Symlink("1.1.0", filepath.Join(bin, "current")))

	running := filepath.Join(bin, "1.2.0")
	did, err := Installed(Install{Bin: bin, Version: "1.3.0", Root: filepath.Join(cache, "1.3.0"),
		InUse: func(dir string) bool { return dir == running }})
	require.NoError(t, err)
	target, err := os.Readlink(filepath.Join(bin, "current"))
	require.NoError(t, err)
	assert.Equal(t, "1.3.0", target)
	assert.Equal(t, []string{".1.1.0.failed", "1.1.0", "1.2.0", "1.3.0", "current", "notes"}, names(t, bin),
		"1.0.0 and its leftovers go; 1.1.0 has a plugin copy, 1.2.0 runs")
	assert.Len(t, did, 4)
}

func TestInstalledOutsideThePluginCachePrunesNothing(t *testing.T) {
	bin := t.TempDir()
	for _, d := range []string{"1.0.0", "1.1.0"} {
		require.NoError(t, os.Mkdir(filepath.Join(bin, d), 0o700))
	}
	did, err := Installed(Install{Bin: bin, Version: "1.1.0", Root: filepath.Join(t.TempDir(), "plugin"),
		InUse: func(string) bool { return false }})
	require.NoError(t, err)
	assert.Empty(t, did)
	assert.Equal(t, []string{"1.0.0", "1.1.0", "current"}, names(t, bin))
}

func TestRunningFromSeesThisProcess(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	assert.True(t, RunningFrom(filepath.Dir(exe)))
	assert.False(t, RunningFrom(t.TempDir()))
}
