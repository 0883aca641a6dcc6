package statefile

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// SafeName turns an identifier from outside (a session id, an agent id) into
// a file name component: letters, digits, '-', '_' and '.' are kept, anything
// else becomes '_', and a long or empty result is replaced by a hash prefix so
// two different ids never share a file by accident.
func SafeName(id string) string {
	if id == "" {
		return "_"
	}
	var b strings.Builder
	changed := false
	for _, r := range id {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		case r == '.' && b.Len() > 0:
			b.WriteRune(r)
		default:
			b.WriteByte('_')
			changed = true
		}
	}
	s := b.String()
	if changed || len(s) > 96 {
		sum := sha256.Sum256([]byte(id))
		if len(s) > 80 {
			s = s[:80]
		}
		s += "-" + hex.EncodeToString(sum[:6])
	}
	return s
}
