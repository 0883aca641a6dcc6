//go:build unix

package repomap

import (
	"golang.org/x/sys/unix"
)

// dirStamps opens directory dir and stats it and each of names relative to
// it: one open, one fstat and one fstatat per name, so the kernel resolves
// the directory's path once instead of once per file. Symlinks are followed,
// as os.Stat does (the walk records followed stamps). ok is false when the
// directory cannot be opened or its time differs from dirMod; see reports,
// per name, whether its size and time match.
func dirStamps(dir string, dirMod int64, names []string, see func(i int, size, mod int64, err error) bool) (ok bool) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mtim.Nano() != dirMod {
		return false
	}
	for i, n := range names {
		err := unix.Fstatat(fd, n, &st, 0)
		if !see(i, st.Size, st.Mtim.Nano(), err) {
			return false
		}
	}
	return true
}
