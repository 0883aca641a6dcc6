package cmdline

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/hint"
)

func TestFlagsReportToStderr(t *testing.T) {
	var stderr bytes.Buffer
	fs := Flags("profile show", &stderr)
	fs.Bool("json", false, "print JSON")
	err := fs.Parse([]string{"-nope"})
	require.Error(t, err)
	assert.NotErrorIs(t, err, flag.ErrHelp)
	assert.Contains(t, stderr.String(), "flag provided but not defined: -nope")
	assert.Contains(t, stderr.String(), "Usage of synaxi profile show:")
}

func TestFail(t *testing.T) {
	var stderr bytes.Buffer
	err := fmt.Errorf("reading profile: %w", hint.Wrap(errors.New("profile.json: unexpected end"), "run `synaxi profile rollback`"))
	assert.Equal(t, 1, Fail(&stderr, err))
	assert.Equal(t, "synaxi: reading profile: profile.json: unexpected end\n  hint: run `synaxi profile rollback`\n", stderr.String())
}
