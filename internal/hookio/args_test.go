package hookio

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestArgs(t *testing.T) {
	hook := Command{Name: "synaxi-x", Version: "v1", Modes: []string{"pre", "post"}}
	withDefault := Command{Name: "synaxi-y", Version: "v1", Modes: []string{"hook", "drain"}, Default: "hook"}
	none := Command{Name: "synaxi-z", Version: "v1"}
	for _, tc := range []struct {
		name   string
		c      Command
		args   []string
		mode   string
		ok     bool
		stdout string
		stderr string
	}{
		{"mode", hook, []string{"pre"}, "pre", true, "", ""},
		{"version", hook, []string{"-version"}, "", false, "synaxi-x v1\n", ""},
		{"long version", none, []string{"--version"}, "", false, "synaxi-z v1\n", ""},
		{"unknown mode", hook, []string{"bogus"}, "", false, "", "usage: synaxi-x pre|post  (input on stdin)\n"},
		{"missing mode", hook, nil, "", false, "", "usage: synaxi-x pre|post  (input on stdin)\n"},
		{"extra argument", hook, []string{"pre", "x"}, "", false, "", "usage: synaxi-x pre|post  (input on stdin)\n"},
		{"default", withDefault, nil, "hook", true, "", ""},
		{"named default", withDefault, []string{"hook"}, "hook", true, "", ""},
		{"other mode", withDefault, []string{"drain"}, "drain", true, "", ""},
		{"bad with default", withDefault, []string{"x"}, "", false, "", "usage: synaxi-y [hook|drain]  (input on stdin)\n"},
		{"no arguments", none, nil, "", true, "", ""},
		{"argument to none", none, []string{"x"}, "", false, "", "usage: synaxi-z  (input on stdin)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			mode, ok := tc.c.Args(tc.args, &out, &errb)
			assert.Equal(t, tc.mode, mode)
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.stdout, out.String())
			assert.Equal(t, tc.stderr, errb.String())
		})
	}
}

func TestRun(t *testing.T) {
	cmd := Command{Name: "synaxi-x", Version: "v1", Modes: []string{"pre", "post"}}
	for _, tc := range []struct {
		name   string
		args   []string
		hook   func(string) error
		stderr string
	}{
		{"ok", []string{"pre"}, func(string) error { return nil }, ""},
		{"error", []string{"pre"}, func(string) error { return errors.New("bad state") }, "synaxi-x: bad state\n"},
		{"panic", []string{"post"}, func(string) error { panic("boom") }, "synaxi-x: internal error: boom\n"},
		{"bad usage runs nothing", []string{"x"}, func(string) error { panic("ran") }, cmd.Usage() + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			assert.Equal(t, 0, cmd.Run(tc.args, &stdout, &stderr, tc.hook))
			assert.Empty(t, stdout.String())
			assert.Equal(t, tc.stderr, stderr.String())
		})
	}
}
