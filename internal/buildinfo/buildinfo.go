// Package buildinfo reports a synaxi binary's version: the value linked in with
// -ldflags "-X main.version=…", else the module version from the build info.
package buildinfo

import "runtime/debug"

// Version returns linked if set, else the main module's version, else "dev".
func Version(linked string) string {
	if linked != "" {
		return linked
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}
