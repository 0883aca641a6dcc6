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
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(_ context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 1 && (args[0] == "-version" || args[0] == "--version") {
		fmt.Fprintln(stdout, "synaxi-noreread", buildinfo.Version(version))
		return 0
	}
	if len(args) != 1 || args[0] != "pre" && args[0] != "post" {
		fmt.Fprintln(stderr, "usage: synaxi-noreread pre|post  (hook input on stdin)")
		return 0
	}
	if err := hook(args[0], stdin, stdout); err != nil {
		fmt.Fprintln(stderr, "synaxi-noreread:", err)
	}
	return 0
}

func hook(mode string, stdin io.Reader, stdout io.Writer) (err error) {
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
	cfg, err := config.LoadDefault(d.ConfigFile())
	if err != nil {
		return err
	}
	s := reads.New(d, cfg.NoReread)
	s.BaseURL, s.ProjectAll = os.Getenv("ANTHROPIC_BASE_URL"), cfg.Proxy.ProjectAll
	if mode == "post" {
		return s.Post(in)
	}
	dec, err := s.Pre(in)
	if err != nil || !dec.Deny {
		return err
	}
	return hookio.WriteDeny(stdout, dec.Reason)
}
