// Command synaxi-mapgen prints repository maps, file outlines and symbol
// lookups from the command line, the same text synaxi's MCP server returns.
//
//	synaxi-mapgen map [--budget N] [--focus f1,f2] [--json] [--root DIR | DIR]
//	synaxi-mapgen outline [--json] [--root DIR] FILE
//	synaxi-mapgen symbol NAME [--refs] [--json] [--root DIR | DIR]
//	synaxi-mapgen languages [--json]
//	synaxi-mapgen -version
//
// DIR (or --root DIR) is the project root, the working directory by default;
// outline paths are relative to it. --json prints the answer as one JSON
// document whose definition sites carry file (relative to the root), line,
// end_line, kind, name and signature.
//
// The index of each repository is kept under $XDG_CACHE_HOME/synaxi/mapgen/
// (see package cache), so a warm run re-reads only what changed. A cold run
// over a large repository shows progress on stderr when stderr is a terminal.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/synaxi/synaxi/internal/buildinfo"
	"github.com/synaxi/synaxi/internal/xdg"
	"github.com/synaxi/synaxi/mapgen/cache"
	"github.com/synaxi/synaxi/mapgen/repomap"
	"github.com/synaxi/synaxi/mapgen/symbols"
	"github.com/synaxi/synaxi/mapgen/walk"
)

var version = ""

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}

const usage = `usage:
  synaxi-mapgen map [--budget N] [--focus f1,f2] [--json] [--root DIR | DIR]
  synaxi-mapgen outline [--json] [--root DIR] FILE
  synaxi-mapgen symbol NAME [--refs] [--json] [--root DIR | DIR]
  synaxi-mapgen languages [--json]
  synaxi-mapgen -version
`

func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "-version", "--version", "version":
		fmt.Fprintln(stdout, "synaxi-mapgen", buildinfo.Version(version))
		return 0
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	case "map":
		err = runMap(ctx, args[1:], stdout, stderr, getenv)
	case "outline":
		err = runOutline(args[1:], stdout, stderr)
	case "symbol":
		err = runSymbol(ctx, args[1:], stdout, stderr, getenv)
	case "languages":
		err = runLanguages(args[1:], stdout, stderr)
	default:
		err = fmt.Errorf("unknown command %q\n%s", args[0], usage)
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "synaxi-mapgen:", err)
		return 1
	}
	return 0
}

// parseInterspersed parses flags that may come before or after the
// positional arguments.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

func openStore(getenv func(string) string) cache.Store {
	return cache.Store{Dir: cache.Dir(xdg.FromEnv(getenv))}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func index(ctx context.Context, dir string, stderr io.Writer, getenv func(string) string) (*repomap.Index, error) {
	root, err := walk.NewRoot(dir)
	if err != nil {
		return nil, err
	}
	ixr := &repomap.Indexer{Root: root, Store: openStore(getenv), Getenv: getenv}
	if isTerminal(stderr) {
		ixr.Progress = &barProgress{w: stderr}
	}
	return ixr.Build(ctx)
}

// barProgress draws a progress bar for a long parse (terminals only).
type barProgress struct {
	w   io.Writer
	bar *progressbar.ProgressBar
}

func (p *barProgress) Start(total int) {
	p.bar = progressbar.NewOptions(total,
		progressbar.OptionSetWriter(p.w),
		progressbar.OptionSetDescription("synaxi-mapgen: indexing"),
		progressbar.OptionShowCount(),
		progressbar.OptionSetItsString("files"),
		progressbar.OptionShowIts(),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
}

func (p *barProgress) Add(n int) { _ = p.bar.Add(n) }
func (p *barProgress) Finish()   { _ = p.bar.Finish() }

// rootDir picks the project root from --root and the positional
// directories: at most one of them, the working directory when neither.
func rootDir(flagRoot string, pos []string) (string, error) {
	switch {
	case len(pos) > 1:
		return "", fmt.Errorf("expected at most one directory, got %q; give the project root once", pos)
	case len(pos) == 1 && flagRoot != "" && pos[0] != flagRoot:
		return "", fmt.Errorf("two project roots: --root %q and %q; give one", flagRoot, pos[0])
	case len(pos) == 1:
		return pos[0], nil
	case flagRoot != "":
		return flagRoot, nil
	}
	return ".", nil
}

// commonFlags adds --json and --root to fs.
func commonFlags(fs *flag.FlagSet) (asJSON *bool, root *string) {
	asJSON = fs.Bool("json", false, "print one JSON document instead of text")
	root = fs.String("root", "", "project root (default: the working directory)")
	return asJSON, root
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// mapJSON is what map --json prints.
type mapJSON struct {
	Root         string               `json:"root"`
	Budget       int                  `json:"budget"`
	Tokens       int                  `json:"tokens"`
	Shown        int                  `json:"shown"`
	Total        int                  `json:"total"`
	Sections     []repomap.MapSection `json:"sections"`
	UnknownFocus []string             `json:"unknown_focus,omitempty"`
	Text         string               `json:"text"`
}

func runMap(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := newFlags("map", stderr)
	budget := fs.Int("budget", repomap.DefaultBudget, "token budget (estimated)")
	focus := fs.String("focus", "", "comma-separated files or identifiers to personalise the ranking towards")
	asJSON, rootFlag := commonFlags(fs)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if *budget <= 0 {
		return fmt.Errorf("--budget %d: give a positive number of tokens (default %d)", *budget, repomap.DefaultBudget)
	}
	dir, err := rootDir(*rootFlag, pos)
	if err != nil {
		return err
	}
	ix, err := index(ctx, dir, stderr, getenv)
	if err != nil {
		return err
	}
	var focusList []string
	for f := range strings.SplitSeq(*focus, ",") {
		if f = strings.TrimSpace(f); f != "" {
			focusList = append(focusList, f)
		}
	}
	res := ix.Map(repomap.MapOptions{Budget: *budget, Focus: focusList})
	for _, f := range res.UnknownFocus {
		fmt.Fprintf(stderr, "synaxi-mapgen: focus %q is neither an indexed source file nor a defined name; ignored\n", f)
	}
	if *asJSON {
		sections := res.Sections
		if sections == nil {
			sections = []repomap.MapSection{}
		}
		return writeJSON(stdout, mapJSON{Root: ix.Root.Dir(), Budget: *budget, Tokens: res.Tokens, Shown: res.Shown,
			Total: res.Total, Sections: sections, UnknownFocus: res.UnknownFocus, Text: res.Text})
	}
	_, err = io.WriteString(stdout, res.Text)
	return err
}

func runOutline(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("outline", stderr)
	asJSON, rootFlag := commonFlags(fs)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("outline takes one FILE (relative to the project root), got %d arguments\n%s", len(pos), usage)
	}
	dir := *rootFlag
	if dir == "" {
		dir = "."
	}
	root, err := walk.NewRoot(dir)
	if err != nil {
		return err
	}
	rel, f, err := repomap.ParseFile(root, pos[0])
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, repomap.OutlineData(rel, f))
	}
	_, err = io.WriteString(stdout, repomap.Outline(rel, f))
	return err
}

func runSymbol(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := newFlags("symbol", stderr)
	refs := fs.Bool("refs", false, "also list the lines that use the name")
	asJSON, rootFlag := commonFlags(fs)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return fmt.Errorf("symbol needs a NAME\n%s", usage)
	}
	if !repomap.IsIdentifier(pos[0]) {
		return fmt.Errorf("%q is not an identifier: give a bare name (Resolve) or Type.method (Dirs.StatePath)", pos[0])
	}
	dir, err := rootDir(*rootFlag, pos[1:])
	if err != nil {
		return err
	}
	ix, err := index(ctx, dir, stderr, getenv)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, ix.Lookup(pos[0], *refs))
	}
	_, err = io.WriteString(stdout, ix.Find(pos[0], *refs))
	return err
}

// languageReport is what `languages --json` prints: the languages this
// build parses and the ones it lacks (all but Go in a build without cgo).
type languageReport struct {
	Parsed  []string `json:"parsed"`
	Missing []string `json:"missing"`
}

func runLanguages(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("languages", stderr)
	asJSON := fs.Bool("json", false, "print {\"parsed\": [...], \"missing\": [...]}")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("languages takes no arguments, got %q\n%s", pos, usage)
	}
	rep := languageReport{Parsed: symbols.Languages(), Missing: symbols.Missing()}
	if rep.Missing == nil {
		rep.Missing = []string{}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		return enc.Encode(rep)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	for _, l := range symbols.Known() {
		status := "parsed"
		if !symbols.Supported(l) {
			status = "missing (this build has no cgo)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", l, status, strings.Join(symbols.Extensions(l), " "))
	}
	return tw.Flush()
}
