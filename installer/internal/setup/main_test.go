package setup

import (
	"os"
	"testing"

	"github.com/synaxi/synaxi/installer/internal/fakes"
)

func TestMain(m *testing.M) {
	fakes.Main(nil)
	os.Exit(m.Run())
}
