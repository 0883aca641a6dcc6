package proxyinfo

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestOlder(t *testing.T) {
	for _, c := range []struct {
		running, ours string
		want          bool
	}{
		{"v0.1.0", "v0.2.0", true},
		{"0.1.0", "0.1.1", true},
		{"v0.2.0", "v0.1.0", false},
		{"v0.2.0", "v0.2.0", false},
		{"v0.2.0", "v0.2.0-3-gabc1234", true},
		{"v0.2.0-3-gabc1234", "v0.2.0-12-gdef5678-dirty", true},
		{"v0.2.0-12-gdef5678", "v0.2.0-3-gabc1234", false},
		{"v0.2.0-rc.1", "v0.2.0", true},
		{"v0.10.0", "v0.9.0", false},
		{"dev", "v0.2.0", false},
		{"v0.1.0", "dev", false},
		{"7675f8a", "v0.2.0", false},
		{"v0.1.0", "7675f8a-dirty", false},
		{"", "v0.1.0", false},
	} {
		assert.Equal(t, c.want, Older(c.running, c.ours), "Older(%q, %q)", c.running, c.ours)
	}
}

func FuzzOlder(f *testing.F) {
	f.Add("v0.1.0", "v0.2.0-3-gabc")
	f.Add("dev", "0.1.0")
	f.Fuzz(func(t *testing.T, a, b string) {
		if Older(a, b) && Older(b, a) {
			t.Fatalf("Older(%q, %q) and Older(%q, %q)", a, b, b, a)
		}
		if Older(a, a) {
			t.Fatalf("Older(%q, %q)", a, a)
		}
	})
}
