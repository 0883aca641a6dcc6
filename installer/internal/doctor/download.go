package doctor

import (
	"context"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/synaxi/synaxi/installer/internal/claude"
	"github.com/synaxi/synaxi/internal/launcher"
)

// checkDownload reports a release download the launcher (plugin/bin/synaxi-run)
// gave up on and has not since completed, in the launcher's own sentence
// (internal/launcher reads its failure records), DATA being CLAUDE_PLUGIN_DATA,
// Claude Code's data directory for synaxi, or synaxi's XDG data directory
// (docs/launcher.md).
func checkDownload(_ context.Context, f *facts) Check {
	var failures []string
	fix := "nothing to do: the launcher tries again by itself (it logs to " + f.d.StatePath("launcher.log") + ")"
	for _, bin := range launcherBinDirs(f) {
		for _, rec := range launcher.Failures(bin) {
			failures = append(failures, rec.Sentence)
			if rec.Kind == launcher.KindChecksum {
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
