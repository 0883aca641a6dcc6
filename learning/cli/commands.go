package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/synaxi/synaxi/internal/cmdline"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/xdg"
	"github.com/synaxi/synaxi/learning/store"
	"golang.org/x/term"
)

// learningEnv loads the configuration for the learning commands.
func learningEnv(stdout, stderr io.Writer) (Env, error) {
	d := xdg.Resolve()
	cfg, err := config.LoadDirs(d, os.Getenv)
	if err != nil {
		return Env{}, err
	}
	return Env{Dirs: d, Config: cfg, Getenv: os.Getenv, Out: stdout, Err: stderr, Terminal: isTerminal(stderr)}, nil
}

// isTerminal reports whether w is a terminal.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// RunIngest runs `synaxi ingest ARGS` and returns its exit code.
func RunIngest(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := cmdline.Flags("ingest", stderr)
	all := fs.Bool("all", false, "every session under ~/.claude/projects (or $CLAUDE_CONFIG_DIR/projects)")
	project := fs.String("project", "", "only sessions that ran in this repository (default: the current one)")
	force := fs.Bool("force", false, "re-read sessions already learned from at their current size")
	dry := fs.Bool("dry-run", false, "print what would be learned, with its evidence; save nothing")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: synaxi ingest [--all | --project DIR] [--force] [--dry-run] [FILES…]")
		fs.PrintDefaults()
	}
	if fs.Parse(args) != nil {
		return 2
	}
	if fs.NArg() > 0 && (*all || *project != "") {
		fmt.Fprintln(stderr, "synaxi ingest: name FILES or select with --all/--project, not both")
		return 2
	}
	if *all && *project != "" {
		fmt.Fprintln(stderr, "synaxi ingest: --all and --project exclude each other")
		return 2
	}
	e, err := learningEnv(stdout, stderr)
	if err != nil {
		return cmdline.Fail(stderr, err)
	}
	o := IngestOptions{All: *all, Project: *project, Files: fs.Args(), Force: *force, DryRun: *dry}
	if !o.All && o.Project == "" && len(o.Files) == 0 {
		wd, err := os.Getwd()
		if err != nil {
			return cmdline.Fail(stderr, err)
		}
		o.Project = store.ProjectRoot(wd)
	} else if o.Project != "" {
		o.Project = store.ProjectRoot(o.Project) // a folder inside the repository names it too
	}
	sum, err := Ingest(ctx, e, o)
	if err != nil {
		return cmdline.Fail(stderr, err)
	}
	if sum.Failed > 0 {
		return 1
	}
	return 0
}

// RunProfile runs `synaxi profile ARGS` and returns its exit code.
func RunProfile(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, ProfileUsage)
		return 2
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stdout, ProfileUsage) // asked for: not an error
		return 0
	}
	e, err := learningEnv(stdout, stderr)
	if err != nil {
		return cmdline.Fail(stderr, err)
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "show":
		fs := cmdline.Flags("profile show", stderr)
		project := fs.String("project", "", "only what applies in this repository (global entries and its own)")
		if fs.Parse(rest) != nil {
			return 2
		}
		p := *project
		if p != "" {
			p = store.ProjectRoot(p)
		}
		err = Show(e, p)
	case "export":
		fs := cmdline.Flags("profile export", stderr)
		asJSON := fs.Bool("json", false, "print JSON")
		if fs.Parse(rest) != nil {
			return 2
		}
		err = ExportProfile(e, *asJSON)
	case "history":
		err = History(e)
	case "review":
		fs := cmdline.Flags("profile review", stderr)
		asJSON := fs.Bool("json", false, "print the candidates as JSON instead of reviewing them")
		project := fs.String("project", "", "only candidates that apply in this repository (default: all)")
		if fs.Parse(rest) != nil {
			return 2
		}
		p := *project
		if p != "" {
			p = store.ProjectRoot(p)
		}
		switch {
		case *asJSON:
			err = ReviewJSON(e, p)
		case !isTerminal(os.Stdin) || !isTerminal(os.Stdout):
			err = fmt.Errorf("synaxi profile review needs a terminal; without one, list with `synaxi profile review --json` and decide with `synaxi profile accept ID` or `reject ID`")
		default:
			err = Review(ctx, e, p, os.Stdin, os.Stdout)
		}
	case "accept", "reject":
		fs := cmdline.Flags("profile "+cmd, stderr)
		global := false
		if cmd == "accept" {
			fs.BoolVar(&global, "global", false, "apply it in every project, not only the one it was learned in")
		}
		if fs.Parse(rest) != nil {
			return 2
		}
		err = Decide(ctx, e, cmd, global, fs.Args())
	default:
		err = Change(ctx, e, cmd, rest)
	}
	if errors.Is(err, ErrUsage) {
		fmt.Fprintf(stderr, "synaxi profile: %v\n\n%s", err, ProfileUsage)
		return 2
	}
	if err != nil {
		return cmdline.Fail(stderr, err)
	}
	return 0
}

// StatusLines returns what writes the learning lines of `synaxi status`.
func StatusLines(stdout, stderr io.Writer) (func(io.Writer), error) {
	e, err := learningEnv(stdout, stderr)
	if err != nil {
		return nil, err
	}
	return func(w io.Writer) { Status(w, e) }, nil
}
