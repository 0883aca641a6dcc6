// Command synaxi-mapgen prints repository maps, file outlines and symbol
// lookups from the command line, the same text synaxi's MCP server returns.
//
//	synaxi-mapgen map [--budget N] [--focus f1,f2] [DIR]
//	synaxi-mapgen outline FILE
//	synaxi-mapgen symbol NAME [--refs] [DIR]
//	synaxi-mapgen languages [--json]
//	synaxi-mapgen -version
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

	"github.com/synaxi/synaxi/internal/buildinfo"
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
  synaxi-mapgen map [--budget N] [--focus f1,f2] [DIR]
  synaxi-mapgen outline FILE
  synaxi-mapgen symbol NAME [--refs] [DIR]
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
		err = runOutline(args[1:], stdout, getenv)
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
	dir, err := cache.Dir(getenv)
	if err != nil {
		return cache.Store{} // nothing persisted: slower, still correct
	}
	return cache.Store{Dir: dir}
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
		ixr.Progress = repomap.LineProgress(stderr)
	}
	return ixr.Build(ctx)
}

func oneDir(pos []string) (string, error) {
	switch len(pos) {
	case 0:
		return ".", nil
	case 1:
		return pos[0], nil
	}
	return "", fmt.Errorf("expected at most one directory, got %q", pos)
}

func runMap(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := newFlags("map", stderr)
	budget := fs.Int("budget", repomap.DefaultBudget, "token budget (estimated)")
	focus := fs.String("focus", "", "comma-separated files or identifiers to personalise the ranking towards")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	dir, err := oneDir(pos)
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
	_, err = io.WriteString(stdout, res.Text)
	return err
}

func runOutline(args []string, stdout io.Writer, getenv func(string) string) error {
	if len(args) != 1 {
		return fmt.Errorf("outline takes one FILE\n%s", usage)
	}
	// The project root is the working directory; the file must be inside it.
	root, err := walk.NewRoot(".")
	if err != nil {
		return err
	}
	rel, f, err := repomap.ParseFile(root, args[0])
	if err != nil {
		return err
	}
	_, err = io.WriteString(stdout, repomap.Outline(rel, f))
	return err
}

func runSymbol(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := newFlags("symbol", stderr)
	refs := fs.Bool("refs", false, "also list the lines that use the name")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return fmt.Errorf("symbol needs a NAME\n%s", usage)
	}
	dir, err := oneDir(pos[1:])
	if err != nil {
		return err
	}
	ix, err := index(ctx, dir, stderr, getenv)
	if err != nil {
		return err
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
