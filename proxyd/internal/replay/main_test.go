package replay

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

func TestMainFixtureP5(t *testing.T) {
	if os.Getenv("P5") == "" {
		t.Skip()
	}
	var out, errb bytes.Buffer
	code := Main(append([]string{os.Getenv("P5")}, strings.Fields(os.Getenv("P5ARGS"))...), &out, &errb)
	t.Log(out.String(), errb.String(), code)
}
