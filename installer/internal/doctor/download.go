package doctor

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/synaxi/synaxi/installer/internal/claude"
)

// checkDownload reports a release download the launcher (plugin/bin/synaxi-run)
// gave up on and has not since completed, in the launcher's own sentence. The
// launcher records the last failure for plugin version V as DATA/bin/.V.failed
// ("EPOCH ATTEMPTS KIND" and the sentence), DATA being CLAUDE_PLUGIN_DATA,
// Claude Code's data directory for synaxi, or synaxi's XDG data directory
// (docs/launcher.md).
func checkDownload(_ context.Context, f *facts) Check {
	var failures []string
	fix := "nothing to do: the launcher tries again by itself (it logs to " + f.d.StatePath("launcher.log") + ")"
	for _, bin := range launcherBinDirs(f) {
		records, _ := filepath.Glob(filepath.Join(bin, ".*.failed"))
		for _, rec := range records {
			version := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(rec), "."), ".failed")
			if _, err := os.Stat(filepath.Join(bin, version)); err == nil {
				continue // installed since
			}
			data, err := os.ReadFile(rec)
			if err != nil {
				continue
			}
			head, sentence, _ := strings.Cut(strings.TrimSpace(string(data)), "\n")
			if sentence == "" {
				continue
			}
			failures = append(failures, sentence)
			if fields := strings.Fields(head); len(fields) == 3 && fields[2] == "checksum" {
				fix = "update the plugin: claude plugin update " + claude.PluginID
			}
		}
	}
	if len(failures) == 0 {
		return pass("download", "no failed download of synaxi's programs")
	}
	return fails("download", strings.Join(failures, " "), fix)
}

var notIDChar = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// launcherBinDirs lists the directories the launcher may install into.
func launcherBinDirs(f *facts) []string {
	var dirs []string
	add := func(data string) {
		if data != "" && !slices.Contains(dirs, filepath.Join(data, "bin")) {
			dirs = append(dirs, filepath.Join(data, "bin"))
		}
	}
	add(f.env.Getenv("CLAUDE_PLUGIN_DATA"))
	if f.cdir != "" {
		add(filepath.Join(f.cdir, "plugins", "data", notIDChar.ReplaceAllString(claude.PluginID, "-")))
	}
	add(f.d.DataPath())
	return dirs
}
