package xdg

import adrg "github.com/adrg/xdg"

// BinHome is the user's own directory for executables: $XDG_BIN_HOME, else
// ~/.local/bin (on every platform). It is not synaxi's directory: synaxi
// puts at most a link to its CLI there.
func BinHome() string {
	mu.Lock()
	defer mu.Unlock()
	adrg.Reload()
	return adrg.BinHome
}
