//go:build !unix

package repomap

import (
	"os"
	"path/filepath"
)

// dirStamps stats directory dir and each of names in it with os.Stat (the
// unix build resolves the directory once; see stamps_unix.go).
func dirStamps(dir string, dirMod int64, names []string, see func(i int, size, mod int64, err error) bool) (ok bool) {
	st, err := os.Stat(dir)
	if err != nil || st.ModTime().UnixNano() != dirMod {
		return false
	}
	for i, n := range names {
		st, err := os.Stat(filepath.Join(dir, n))
		var size, mod int64
		if err == nil {
			size, mod = st.Size(), st.ModTime().UnixNano()
		}
		if !see(i, size, mod, err) {
			return false
		}
	}
	return true
}
