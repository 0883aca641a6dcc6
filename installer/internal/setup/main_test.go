package setup

import (
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/synaxi/synaxi/installer/internal/fakes"
)

// TestMain puts the fake claude and synaxi-proxyd on PATH. The install and
// uninstall flows are scripts in cmd/synaxi/testdata/script; the tests here
// reach inside the package.
func TestMain(m *testing.M) {
	testscript.Main(m, fakes.Commands())
}
