// Command synaxi-noreread is synaxi's no-reread hook for Claude Code.
//
//	synaxi-noreread pre    PreToolUse on Read and Bash: deny re-reading an
//	                       unchanged file still in the agent's context, and
//	                       break loops of an identical repeated command
//	synaxi-noreread post   PostToolUse on Read, Bash, Edit, Write, MultiEdit
//	                       and NotebookEdit, and PostToolUseFailure: record
//	                       reads, forget edited files, and feed the loop
//	                       governor (docs/governor.md)
//
// The hook input is read from stdin. Stdout carries only a deny decision,
// or the governor's directive (and, with governor.mode on, the stop); on
// any error the hook allows the call: it exits 0 with no output and never
// exits 2.
package main

import (
	"context"
	"errors"
	"io"
	"os"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/governor"
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
	return cmd.Run(args, stdout, stderr, func(mode string) error { return hook(mode, stdin, stdout, getenv) })
}

func hook(mode string, stdin io.Reader, stdout io.Writer, getenv func(string) string) error {
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
	s.Mode = governor.Mode(cfg.Governor.Mode)
	s.BaseURL, s.ProjectAll = getenv("ANTHROPIC_BASE_URL"), cfg.Proxy.Scope == config.ScopeAll
	s.ProxyPort = cfg.Proxy.Port
	s.CustomHeaders = getenv("ANTHROPIC_CUSTOM_HEADERS")
	if mode == "post" {
		return post(s, in, stdout)
	}
	dec, err := s.Pre(in)
	switch {
	case err != nil || !dec.Deny:
		return err
	case dec.Stop != "":
		return hookio.WriteStop(stdout, dec.Reason, dec.Stop)
	}
	return hookio.WriteDeny(stdout, dec.Reason)
}

// post records the finished call and feeds the governor; a fire is told to
// the model as additional context. With governor.mode on the governor also
// holds the stop for the next call's PreToolUse (reads.Store.preHeld):
// Claude Code ignores continue false from PostToolUse and
// PostToolUseFailure.
func post(s *reads.Store, in *hookio.Input, stdout io.Writer) error {
	var err error
	if in.HookEventName != "PostToolUseFailure" || in.ToolName == "Bash" {
		// A failed Bash command may still have changed files.
		err = s.Post(in)
	}
	fire, ok, gerr := s.Govern(in)
	if gerr != nil || !ok {
		return errors.Join(err, gerr)
	}
	event := in.HookEventName
	if event == "" {
		event = "PostToolUse"
	}
	return errors.Join(err, hookio.WriteToolContext(stdout, event, fire.Directive()))
}
