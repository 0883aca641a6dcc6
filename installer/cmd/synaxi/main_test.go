package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/ledger"
	"github.com/synaxi/synaxi/internal/xdg"
)

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestCLI(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, "state"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, "data"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
	cf := int64(5000)
	require.NoError(t, ledger.Record(xdg.Resolve(), &ledger.Row{ID: "r1", Time: time.Unix(1e9, 0), Session: "sess-1", Model: "claude-sonnet-4-5",
		Status: 200, Projected: true, Counterfactual: &cf, Usage: ledger.Usage{Input: 1000}}))

	tests := []struct {
		args     []string
		code     int
		contains string
	}{
		{[]string{"-version"}, 0, "synaxi "},
		{[]string{}, 2, ""},
		{[]string{"frobnicate"}, 2, ""},
		{[]string{"savings"}, 0, "4,000 tokens"},
		{[]string{"savings", "--session", "sess-1", "--json"}, 0, `"saved_tokens": 4000`},
		{[]string{"savings", "--session", "nope"}, 1, ""},
		{[]string{"wrap"}, 2, ""},
		{[]string{"wrap", "vim"}, 2, ""},
		{[]string{"install", "extra"}, 2, ""},
		{[]string{"unwrap"}, 0, "cleaned up 0 stale wrap(s)"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, out, _ := runCLI(t, tt.args...)
			assert.Equal(t, tt.code, code)
			assert.Contains(t, out, tt.contains)
		})
	}

	page := filepath.Join(home, "r.html")
	code, out, errs := runCLI(t, "report", "--out", page)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "1 ledger rows")
	data, err := os.ReadFile(page)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(data), "<!DOCTYPE html>"))
}
