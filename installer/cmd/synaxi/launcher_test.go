package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLauncherInstalledSwitchesCurrent(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	bin := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(bin, "1.0.0"), 0o700))
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"launcher", "installed", bin, "1.0.0", t.TempDir()}, nil, &stderr, &stderr)
	require.Equal(t, 0, code, stderr.String())
	target, err := os.Readlink(filepath.Join(bin, "current"))
	require.NoError(t, err)
	assert.Equal(t, "1.0.0", target)

	assert.Equal(t, 2, run(context.Background(), []string{"launcher", "installed"}, nil, &stderr, &stderr))
}
