package config

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"reflect"
	"strings"
)

// ProxyFingerprint identifies the configuration a synaxi-proxyd runs with:
// a short hash of every proxy.* and projection.* value but proxy.port,
// flags included once the proxy has laid them over the loaded file. The
// proxy reports the fingerprint it started with on /health; `synaxi
// doctor` and `synaxi install` compare it with the fingerprint of the
// configuration as it is now, so a changed key is noticed and applied.
// The port is compared on its own, against the address the proxy listens
// on: the SessionStart hook starts the proxy with -port, the port it
// recorded, which is the configuration's own port 0 ("the recorded one").
// Being a hash, it shows no value (a visibility store's password, say) to
// whoever reads /health.
func (c *Config) ProxyFingerprint() string {
	h := sha256.New()
	_ = walk(c, func(key string, v reflect.Value, _ string) error {
		if key != "proxy.port" && (strings.HasPrefix(key, "proxy.") || strings.HasPrefix(key, "projection.")) {
			fmt.Fprintf(h, "%s=%s\n", key, format(v))
		}
		return nil
	})
	return hex.EncodeToString(h.Sum(nil)[:6])
}
