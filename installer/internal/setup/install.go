package setup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/synaxi/synaxi/installer/internal/journal"
	"github.com/synaxi/synaxi/internal/hint"
	"github.com/synaxi/synaxi/internal/xdg"
)

// Options configure install and uninstall.
type Options struct {
	Route     bool   // route Claude Code's model traffic through the proxy (settings env)
	Claude    string // Claude Code CLI; "" finds it (SYNAXI_CLAUDE, then PATH)
	NoPlugin  bool   // skip the plugin (binaries, status line and proxy only)
	RepoRoot  string // checkout to register as the marketplace; "" derives it
	BinSource string // directory holding the built binaries; "" is beside this executable
	NoProxy   bool   // do not start or stop the proxy
	Version   string // this synaxi's version, stamped beside the copies (StampFile); "" stamps nothing
	Purge     bool   // uninstall: also remove synaxi's own state, data and cache directories

	Out    io.Writer
	Getenv func(string) string
	Env    []string // environment for child processes; nil inherits
}

func (o *Options) defaults() {
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
}

// installer carries one install or uninstall run. Each step of install
// has a file of its own, with its undo beside it: binaries.go, cli.go,
// plugin.go, statusline.go, proxy.go, route.go; settings.go holds the
// settings.json edits they share, and uninstall.go the journal's restore.
type installer struct {
	*Options
	dirs  xdg.Dirs
	jdir  string
	j     *journal.Journal
	cdir  string // Claude Code's config dir
	warns int
}

func (in *installer) say(format string, a ...any) { fmt.Fprintf(in.Out, format+"\n", a...) }

// warn reports something install or uninstall skipped, with its hints;
// the run then ends in ErrWarnings.
func (in *installer) warn(err error) {
	in.warns++
	hint.Print(in.Out, "warning: ", "  ", err)
}

// ErrWarnings reports that install finished but skipped something it said.
var ErrWarnings = errors.New("finished with warnings (see above)")

// Install performs `synaxi install`. It is idempotent: a second run changes
// nothing that the first already did and backs nothing up twice.
func Install(ctx context.Context, opts Options) error {
	in := newInstaller(opts)
	// The journal's own directory is synaxi's, but its parents may be new
	// too ($XDG_DATA_HOME in a fresh home): uninstall removes those it made
	// once they are empty.
	made := journal.Missing(in.jdir)
	if err := xdg.Ensure(in.jdir); err != nil {
		return err
	}
	err := in.locked(func(j *journal.Journal) error {
		if len(made) > 1 {
			j.AddDirs(made[:len(made)-1]...)
		}
		j.ClaudeDir = in.cdir
		// Every change was recorded before it was made; save once more so
		// the journal also holds what each step left behind, even when a
		// later step failed. With no journal, nothing was changed.
		err := in.install(ctx)
		if journal.Exists(in.jdir) {
			if serr := in.record(); serr != nil && err == nil {
				err = serr
			}
		}
		if err == nil && in.warns > 0 {
			err = ErrWarnings
		}
		return err
	})
	if !journal.Exists(in.jdir) && len(made) > 0 {
		// No journal was ever written, so nothing was changed: the
		// directories made for it go again.
		_ = os.RemoveAll(in.jdir)
		for i := len(made) - 2; i >= 0; i-- {
			_ = os.Remove(made[i])
		}
	}
	return err
}

func newInstaller(opts Options) *installer {
	opts.defaults()
	in := &installer{Options: &opts, dirs: xdg.Resolve(), cdir: xdg.ClaudeDir(opts.Getenv)}
	in.jdir = journal.Dir(in.dirs)
	return in
}

// saveJournal writes the journal; tests replace it to make journaling fail.
var saveJournal = (*journal.Journal).Save

// record saves the journal. It runs before every change install makes, so
// a change the journal cannot hold is not made.
func (in *installer) record() error {
	if err := saveJournal(in.j, in.jdir); err != nil {
		return hint.Wrap(fmt.Errorf("record the change in the install journal: %w; nothing further was changed", err),
			"`synaxi uninstall` undoes what the journal holds")
	}
	return nil
}

// locked runs fn with the journal loaded, holding its lock.
func (in *installer) locked(fn func(*journal.Journal) error) error {
	return journal.Lock(in.jdir, func() error {
		j, err := journal.Load(in.jdir)
		if err != nil {
			return err
		}
		in.j = j
		return fn(j)
	})
}

// install runs the steps in order. A settings file install cannot edit,
// binaries it cannot find or a plugin it has no way to install stop it
// before anything changes: install either finishes or leaves the home as
// it was.
func (in *installer) install(ctx context.Context) error {
	if _, err := in.readSettings(); err != nil {
		return err
	}
	src, err := in.binSource()
	if err != nil {
		return err
	}
	if err := in.preflight(src); err != nil {
		return fmt.Errorf("%w; nothing was changed", err)
	}
	if err := in.copyBinaries(src); err != nil {
		return err
	}
	if err := in.linkCLI(); err != nil {
		return err
	}
	if !in.NoPlugin {
		if err := in.installPlugin(ctx); err != nil {
			return err
		}
	}
	if err := in.composeStatusLine(); err != nil {
		return err
	}
	route := false
	if in.Route {
		// The proxy's upstream is settled before it starts: a proxy already
		// running with another one is restarted by startProxy.
		if route, err = in.keepEndpoint(); err != nil {
			return err
		}
	}
	url := ""
	if !in.NoProxy {
		url = in.startProxy(ctx)
	}
	if route {
		return in.route(url)
	}
	return nil
}
