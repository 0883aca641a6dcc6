// Command synaxi-noreread is synaxi's no-reread hook for Claude Code.
//
//	synaxi-noreread pre    PreToolUse on Read and Bash: deny re-reading an
//	                       unchanged file still in the agent's context, and
//	                       break loops of an identical repeated command
//	synaxi-noreread post   PostToolUse on Read, Bash, Edit, Write, MultiEdit
//	                       and NotebookEdit: record reads, forget edited files
//
// The hook input is read from stdin. Stdout carries only a deny decision;
// on any error the hook allows the call: it exits 0 with no output and
// never exits 2.
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/hookio"
	"github.com/synaxi/synaxi/internal/xdg"

	"github.com/synaxi/synaxi/hooks/internal/reads"
	"github.com/synaxi/synaxi/internal/buildinfo"
)

// version is set with -ldflags "-X main.version=…".
var version string

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}

func run(_ context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	cmd := hookio.Command{Name: "synaxi-noreread", Version: buildinfo.Version(version), Modes: []string{"pre", "post"}}
	mode, ok := cmd.Args(args, stdout, stderr)
	if !ok {
		return 0
	}
	if err := hook(mode, stdin, stdout, getenv); err != nil {
		fmt.Fprintln(stderr, "synaxi-noreread:", err)
	}
	return 0
}

func hook(mode string, stdin io.Reader, stdout io.Writer, getenv func(string) string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error: %v", r)
		}
	}()
	in, err := hookio.Read(stdin)
	if err != nil {
		return err
	}
	d := xdg.Resolve()
	cfg, err := config.LoadDirs(d, getenv)
	if err != nil {
		return err // a bad file: no guard at all rather than one the user may have turned off
	}
	s := reads.New(d, cfg.NoReread)
	s.BaseURL, s.ProjectAll = getenv("ANTHROPIC_BASE_URL"), cfg.Proxy.ProjectAll
	s.CustomHeaders = getenv("ANTHROPIC_CUSTOM_HEADERS")
	if mode == "post" {
		return s.Post(in)
	}
	dec, err := s.Pre(in)
	if err != nil || !dec.Deny {
		return err
	}
	return hookio.WriteDeny(stdout, dec.Reason)
}
