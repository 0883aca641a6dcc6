package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/synaxi/synaxi/internal/cmdline"

	"github.com/synaxi/synaxi/internal/launcher"
	"github.com/synaxi/synaxi/internal/xdg"
)

// runLauncher is the hidden `synaxi launcher installed BIN VERSION ROOT`
// that the plugin's launcher runs from a release it has just moved into
// BIN/VERSION: it switches `current` and prunes what nothing can use
// (internal/launcher), logging each step to the launcher's log.
func runLauncher(args []string, stderr io.Writer) int {
	if len(args) != 4 || args[0] != "installed" {
		fmt.Fprintln(stderr, "usage: synaxi launcher installed BIN VERSION PLUGIN-ROOT (run by plugin/bin/synaxi-run)")
		return 2
	}
	did, err := launcher.Installed(launcher.Install{Bin: args[1], Version: args[2], Root: args[3]})
	if err != nil {
		did = append(did, err.Error())
	}
	logLauncher(did)
	if err != nil {
		return cmdline.Fail(stderr, err)
	}
	return 0
}

// logLauncher appends lines to the launcher's log, $XDG_STATE_HOME/synaxi/
// launcher.log, in the shell launcher's format. Logging is best effort.
func logLauncher(lines []string) {
	if len(lines) == 0 {
		return
	}
	dirs := xdg.Resolve()
	if xdg.Ensure(dirs.State) != nil {
		return
	}
	f, err := os.OpenFile(filepath.Join(dirs.State, "launcher.log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	now := time.Now().UTC().Format("2006-01-02T15:04:05Z")
	for _, l := range lines {
		fmt.Fprintf(f, "%s synaxi launcher: %s\n", now, l)
	}
}
