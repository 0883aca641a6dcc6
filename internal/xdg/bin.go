package xdg

import (
	"os"
	"path/filepath"
)

// BinHome is the user's own directory for executables: $XDG_BIN_HOME when it
// is absolute, else ~/.local/bin (on every platform, as in adrg/xdg). It is
// not synaxi's directory: synaxi puts at most a link to its CLI there.
func BinHome() string { return binHome(os.Getenv) }

func binHome(getenv func(string) string) string {
	if v := getenv("XDG_BIN_HOME"); filepath.IsAbs(v) {
		return v
	}
	return filepath.Join(homeDir(getenv), ".local", "bin")
}
