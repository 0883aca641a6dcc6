package hint

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestHints(t *testing.T) {
	base := errors.New("settings.json:3:1: unexpected end")
	tests := []struct {
		name string
		err  error
		want []string
	}{
		{"none", base, nil},
		{"nil", nil, nil},
		{"one", Wrap(base, "fix it by hand"), []string{"fix it by hand"}},
		{"kept through %w", fmt.Errorf("install: %w", Wrap(base, "fix it by hand")), []string{"fix it by hand"}},
		{"outermost first, each once", Wrap(fmt.Errorf("x: %w", Wrap(base, "inner", "shared")), "outer", "shared"), []string{"outer", "shared", "inner"}},
		{"joined", errors.Join(New("a", "ha"), New("b", "hb")), []string{"ha", "hb"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Hints(tt.err))
		})
	}
	assert.Nil(t, Wrap(nil, "never shown"))
	assert.Same(t, base, Wrap(base), "no hints: the error as it was")
}

func TestPrint(t *testing.T) {
	var b bytes.Buffer
	Print(&b, "synaxi: ", "  ", fmt.Errorf("install: %w", Errorf("run `synaxi install` again", "%s is missing", "synaxi-proxyd")))
	assert.Equal(t, "synaxi: install: synaxi-proxyd is missing\n  hint: run `synaxi install` again\n", b.String())
}
