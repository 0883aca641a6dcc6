package setup

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/synaxi/synaxi/installer/internal/claude"
	"github.com/synaxi/synaxi/installer/internal/journal"
	"github.com/synaxi/synaxi/installer/internal/proxyctl"
	"github.com/synaxi/synaxi/installer/internal/settings"
	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/xdg"
	"github.com/synaxi/synaxi/learning/extract"
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

// installer carries one install or uninstall run.
type installer struct {
	*Options
	dirs xdg.Dirs
	jdir string
	j    *journal.Journal
	cdir string // Claude Code's config dir
	warn int
}

func (in *installer) say(format string, a ...any) { fmt.Fprintf(in.Out, format+"\n", a...) }

func (in *installer) warnf(format string, a ...any) {
	in.warn++
	fmt.Fprintf(in.Out, "warning: "+format+"\n", a...)
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
		if err == nil && in.warn > 0 {
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
		return fmt.Errorf("record the change in the install journal: %w\n  nothing further was changed; `synaxi uninstall` undoes what the journal holds", err)
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

func (in *installer) install(ctx context.Context) error {
	// A settings file install cannot edit, binaries it cannot find or a
	// plugin it has no way to install stop it before anything changes:
	// install either finishes or leaves the home as it was.
	if _, err := in.readSettings(); err != nil {
		return err
	}
	src, err := in.binSource()
	if err != nil {
		return err
	}
	if err := in.preflight(src); err != nil {
		return fmt.Errorf("%w\n  nothing was changed", err)
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
	in.offerModelExtractor()
	var st *proxyctl.State
	if !in.NoProxy {
		var err error
		st, err = proxyctl.Start(ctx, ProxyBin(in.dirs), in.dirs, in.Env)
		if err != nil {
			in.warnf("proxy did not start: %v\n  fix: run `synaxi doctor`; the proxy binary is %s", err, ProxyBin(in.dirs))
		} else {
			if r := st.Replaced; r != nil {
				in.say("proxy: replaced version %s (pid %d, draining what it has in flight) with %s", r.Version, r.PID, st.Info.Version)
			}
			in.say("proxy: running at %s (pid %d)", st.URL(), st.Info.PID)
		}
	}
	if in.Route {
		if st == nil || !st.Running {
			in.warnf("not routing Claude Code through the proxy: the proxy is not running\n  fix: start it (`%s start`) and run `synaxi install --route` again", ProxyBin(in.dirs))
			return nil
		}
		return in.route(st.URL())
	}
	return nil
}

// offerModelExtractor says, while learning uses the embedded rules, that
// the user's own claude CLI can extract instead, with the most a session
// can cost under the configured token cap.
func (in *installer) offerModelExtractor() {
	l, err := config.Load(in.dirs.ConfigFile(), in.Getenv)
	if err != nil || l.Config.Ingest.Extractor != "embedded" && l.Config.Ingest.Extractor != "" {
		return
	}
	model := l.Config.Ingest.Model
	if model == "" {
		model = "haiku"
	}
	c := extract.Cap(l.Config.Ingest.MaxTokens)
	in.say("learning: the embedded rules (no network) learn from what you type. Your own claude CLI can do it instead, in any language:\n"+
		"  %s, at most %d tokens a session (at most $%.3f a session at its list price);\n"+
		"  set ingest.extractor = \"claude\" in %s (ingest.max_tokens sets the cap)", model, int(c), c.USD(model), in.dirs.ConfigFile())
}

// binSource is the directory install copies the binaries from: --from, else
// the directory of this executable (plugin/bin in a checkout; the plugin's
// data directory in a marketplace install, where the launcher put them).
func (in *installer) binSource() (string, error) {
	if in.BinSource != "" {
		return in.BinSource, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find this executable: %w", err)
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	return filepath.Dir(exe), nil
}

// repoRoot is the checkout to register as the marketplace: --repo, else
// the checkout this synaxi was built in, else the one an earlier install
// registered; "" in a marketplace install.
func (in *installer) repoRoot() string {
	if in.RepoRoot != "" {
		return in.RepoRoot
	}
	if root := Checkout(); root != "" {
		return root
	}
	return in.j.RepoRoot
}

// preflight checks what install needs before its first change: the
// binaries the status line and the proxy run, and a way to have the
// plugin (already installed, or a checkout to install it from).
func (in *installer) preflight(src string) error {
	if same, _ := sameDir(src, BinDir(in.dirs)); !same {
		for _, name := range []string{"synaxi-statusline", "synaxi-proxyd"} {
			if !isExec(filepath.Join(src, name)) {
				return fmt.Errorf("%s is missing from %s\n  fix: %s", name, src, RebuildHint())
			}
		}
	}
	if in.NoPlugin || in.repoRoot() != "" {
		return nil
	}
	if installed, _ := claude.InstalledOffline(in.cdir); !installed {
		return fmt.Errorf("the synaxi plugin is not installed in Claude Code, and this synaxi was not built in a checkout to install it from\n  fix: %s", PluginInstallHint)
	}
	return nil
}

// copyBinaries copies the built binaries from src to the stable bin dir.
func (in *installer) copyBinaries(src string) error {
	dst := BinDir(in.dirs)
	if err := in.j.MkdirAll(dst, in.record); err != nil {
		return err
	}
	if same, _ := sameDir(src, dst); same {
		in.say("binaries: already running from %s", dst)
		return nil
	}
	copied, kept := 0, 0
	for _, name := range Binaries {
		from := filepath.Join(src, name)
		data, err := os.ReadFile(from)
		if errors.Is(err, fs.ErrNotExist) {
			continue // preflight checked the ones install needs
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", from, err)
		}
		to := filepath.Join(dst, name)
		if cur, err := os.ReadFile(to); err == nil && bytes.Equal(cur, data) {
			kept++
			continue
		}
		f, err := in.j.Backup(in.jdir, to)
		if err != nil {
			return err
		}
		f.Owned = true
		f.Wrote(data, "copied from "+from)
		if err := in.record(); err != nil {
			return err
		}
		if err := journal.WriteFile(to, data, 0o755); err != nil {
			return err
		}
		copied++
	}
	if err := in.stamp(dst); err != nil {
		return err
	}
	in.say("binaries: %d copied, %d already current, in %s", copied, kept, dst)
	return nil
}

// stamp writes the version of the copies into dst's StampFile, journaled
// as synaxi's own, so the SessionStart hook of a newer plugin version knows
// to refresh them.
func (in *installer) stamp(dst string) error {
	if in.Version == "" {
		return nil
	}
	to := filepath.Join(dst, StampFile)
	data := []byte(in.Version + "\n")
	if cur, err := os.ReadFile(to); err == nil && bytes.Equal(cur, data) {
		return nil
	}
	f, err := in.j.Backup(in.jdir, to)
	if err != nil {
		return err
	}
	f.Owned = true
	f.Wrote(data, "the version of the copied binaries")
	if err := in.record(); err != nil {
		return err
	}
	return journal.WriteFile(to, data, 0o644)
}

func sameDir(a, b string) (bool, error) {
	fa, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	fb, err := os.Stat(b)
	if err != nil {
		return false, err
	}
	return os.SameFile(fa, fb), nil
}

// installPlugin registers the marketplace and installs the plugin through
// the CLI. A missing CLI is reported with the fix and skipped.
func (in *installer) installPlugin(ctx context.Context) error {
	if installed, enabled := claude.InstalledOffline(in.cdir); installed && enabled && in.repoRoot() == "" {
		in.say("plugin: %s already installed and enabled (from its marketplace)", claude.PluginID)
		return nil
	}
	bin, err := claude.Find(in.Claude, in.Getenv)
	if err != nil {
		in.warnf("%v: the plugin was not installed\n  fix: %s", err, claude.Fix)
		return nil
	}
	in.j.Claude = bin
	root := in.repoRoot()
	if root == "" {
		return in.enableMarketplacePlugin(ctx, &claude.CLI{Bin: bin, Env: in.Env})
	}
	in.j.RepoRoot = root
	cli := &claude.CLI{Bin: bin, Env: in.Env}

	ms, err := cli.Marketplaces(ctx)
	if err != nil {
		in.warnf("%v\n  fix: check that `%s plugin marketplace list` works", err, bin)
		return nil
	}
	haveMarket := slices.ContainsFunc(ms, func(m claude.MarketplaceInfo) bool {
		return m.Name == claude.Marketplace && filepath.Clean(m.Path) == filepath.Clean(root)
	})
	p, err := cli.Synaxi(ctx)
	if err != nil {
		in.warnf("%v", err)
		return nil
	}
	if haveMarket && p != nil && p.Enabled {
		in.say("plugin: %s %s already installed and enabled (%s scope)", claude.PluginID, p.Version, p.Scope)
		return nil
	}
	// The CLI rewrites these files; keep their originals first.
	files, err := in.backupClaudeFiles()
	if err != nil {
		return err
	}
	// The CLI adds these objects; where they were absent, uninstall removes
	// them again once the CLI has emptied them.
	if cur, err := settings.Read(files[0].Path); err == nil {
		for _, k := range []string{"extraKnownMarketplaces", "enabledPlugins"} {
			if _, ok, err := cur.Get(k); err == nil && !ok {
				files[0].AddKey(journal.Key{Path: []string{k}, Container: true})
			}
		}
	}
	if !haveMarket {
		known := slices.ContainsFunc(ms, func(m claude.MarketplaceInfo) bool { return m.Name == claude.Marketplace })
		ok, err := in.runCLI(ctx, cli, files, &in.j.MarketplaceAdded, !known, "plugin", "marketplace", "add", root)
		if !ok || err != nil {
			return err
		}
		in.say("plugin: marketplace %s registered from %s", claude.Marketplace, root)
	}
	switch {
	case p == nil:
		ok, err := in.runCLI(ctx, cli, files, &in.j.PluginInstalled, true, "plugin", "install", claude.PluginID)
		if !ok || err != nil {
			return err
		}
		in.say("plugin: %s installed", claude.PluginID)
	case !p.Enabled:
		ok, err := in.runCLI(ctx, cli, files, nil, false, "plugin", "enable", claude.PluginID)
		if !ok || err != nil {
			return err
		}
		in.say("plugin: %s enabled", claude.PluginID)
	}
	return nil
}

// enableMarketplacePlugin enables the plugin a marketplace install put in
// place but left disabled; with no checkout, install never adds a
// marketplace of its own.
func (in *installer) enableMarketplacePlugin(ctx context.Context, cli *claude.CLI) error {
	p, err := cli.Synaxi(ctx)
	switch {
	case err != nil:
		in.warnf("%v", err)
		return nil
	case p == nil:
		in.warnf("%s is not installed\n  fix: %s", claude.PluginID, PluginInstallHint)
		return nil
	case p.Enabled:
		in.say("plugin: %s %s already installed and enabled (%s scope)", claude.PluginID, p.Version, p.Scope)
		return nil
	}
	files, err := in.backupClaudeFiles()
	if err != nil {
		return err
	}
	ok, err := in.runCLI(ctx, cli, files, nil, false, "plugin", "enable", claude.PluginID)
	if ok && err == nil {
		in.say("plugin: %s enabled", claude.PluginID)
	}
	return err
}

// runCLI runs one CLI command that changes Claude Code's files, journaled
// on both sides: before it runs, the journal is saved with flag set (when
// mark), so uninstall knows to undo it even if install stops right after;
// afterwards, what the CLI left in each file is recorded. A failed command
// is warned about (with the command to run by hand) and reports false, and
// its flag goes back to what it was.
func (in *installer) runCLI(ctx context.Context, cli *claude.CLI, files []*journal.File, flag *bool, mark bool, args ...string) (bool, error) {
	was := false
	if flag != nil {
		was = *flag
		*flag = was || mark
	}
	if err := in.record(); err != nil {
		return false, err
	}
	cmd := "claude " + strings.Join(args, " ")
	_, runErr := cli.Run(ctx, args...)
	change := cmd
	if runErr != nil {
		change = ""
		if flag != nil {
			*flag = was
		}
	}
	for i, f := range files {
		note := ""
		if i == 0 {
			note = change
		}
		if err := f.Note(note); err != nil {
			return false, fmt.Errorf("journal what `%s` changed: %w", cmd, err)
		}
	}
	if err := in.record(); err != nil {
		return false, err
	}
	if runErr != nil {
		in.warnf("%v\n  fix: run `%s %s` by hand to see why", runErr, cli.Bin, strings.Join(args, " "))
		return false, nil
	}
	return true, nil
}

// backupClaudeFiles journals settings.json and the plugin registry files;
// settings.json comes first.
func (in *installer) backupClaudeFiles() ([]*journal.File, error) {
	if err := in.j.MkdirAll(in.cdir, in.record); err != nil {
		return nil, err
	}
	var out []*journal.File
	for _, p := range append([]string{claude.SettingsPath(in.cdir)}, claude.RegistryPaths(in.cdir)...) {
		f, err := in.j.Backup(in.jdir, p)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	// The CLI creates these; record them so uninstall removes what is empty.
	for _, d := range []string{"plugins/cache", "plugins/marketplaces", "plugins/data"} {
		p := filepath.Join(in.cdir, d)
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			for _, q := range []string{filepath.Dir(p), p} {
				if _, err := os.Stat(q); errors.Is(err, fs.ErrNotExist) && !slices.Contains(in.j.Dirs, q) {
					in.j.Dirs = append(in.j.Dirs, q)
				}
			}
		}
	}
	return out, nil
}

// readSettings reads settings.json once and checks that it can be edited.
func (in *installer) readSettings() (*settings.Doc, error) {
	doc, err := settings.Read(claude.SettingsPath(in.cdir))
	if err != nil {
		return nil, fmt.Errorf("%w\n  nothing was changed; run `synaxi install` again once it is fixed", err)
	}
	return doc, nil
}

// setting is one settings.json key install sets, and why (for the journal).
type setting struct {
	keys   []string
	value  any
	change string
}

// setSettings applies changes to doc (settings.json as read once) and
// writes the file once, journaling it and each key's previous value first.
// A key that already holds its value is left alone.
func (in *installer) setSettings(doc *settings.Doc, changes ...setting) error {
	path := claude.SettingsPath(in.cdir)
	var keys []journal.Key
	var notes []string
	for _, c := range changes {
		old, existed, err := doc.Get(c.keys...)
		if err != nil {
			return err
		}
		enc, _ := json.Marshal(c.value)
		if existed && jsonEqual(old, enc) {
			continue
		}
		// Record the shallowest key that did not exist: creating env.X where
		// there was no env creates env.
		for i := 1; i < len(c.keys); i++ {
			if _, ok, _ := doc.Get(c.keys[:i]...); !ok {
				keys = append(keys, journal.Key{Path: slices.Clone(c.keys[:i]), Container: true})
				break
			}
		}
		k := journal.Key{Path: c.keys, Existed: existed}
		if existed {
			k.Original = append(json.RawMessage(nil), old...)
		}
		keys = append(keys, k)
		if err := doc.Set(c.value, c.keys...); err != nil {
			return err
		}
		notes = append(notes, c.change)
	}
	if len(notes) == 0 {
		return nil
	}
	if err := in.j.MkdirAll(in.cdir, in.record); err != nil {
		return err
	}
	f, err := in.j.Backup(in.jdir, path)
	if err != nil {
		return err
	}
	for _, k := range keys {
		f.AddKey(k)
	}
	for _, n := range notes {
		f.Wrote(doc.Bytes(), n)
	}
	if err := in.record(); err != nil {
		return err
	}
	return journal.WriteFile(path, doc.Bytes(), modeOf(path))
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

func modeOf(p string) fs.FileMode {
	if fi, err := os.Stat(p); err == nil {
		return fi.Mode().Perm()
	}
	return 0o600
}

// statusLine is the settings.json statusLine install writes, in the order
// Claude Code's documentation shows it.
type statusLine struct {
	Type    string `json:"type"`
	Command string `json:"command"`
}

// composeStatusLine points statusLine at the stable synaxi-statusline and
// keeps the user's own command as statusline.previous_command.
func (in *installer) composeStatusLine() error {
	doc, err := in.readSettings()
	if err != nil {
		return err
	}
	ours := StatusLineCommand(in.dirs)
	cur := doc.String("statusLine", "command")
	_, hasLine, _ := doc.Get("statusLine")
	switch {
	case cur == ours:
		in.say("status line: already composed")
		return nil
	case !hasLine || cur == "":
		if err := in.setSettings(doc, setting{[]string{"statusLine"}, statusLine{"command", ours}, "statusLine set to synaxi-statusline"}); err != nil {
			return err
		}
		in.say("status line: set to %s", ours)
		return nil
	}
	if err := in.recordPreviousCommand(cur); err != nil {
		in.warnf("%v\n  your status line was left as it is", err)
		return nil
	}
	err = in.setSettings(doc,
		setting{[]string{"statusLine", "type"}, "command", "statusLine.type set to command"},
		setting{[]string{"statusLine", "command"}, ours, "statusLine.command now runs synaxi-statusline, which prints your previous status line first"})
	if err != nil {
		return err
	}
	in.say("status line: composed (yours first: %s)", cur)
	return nil
}

// recordPreviousCommand writes statusline.previous_command into config.toml
// without overwriting anything the user wrote there.
func (in *installer) recordPreviousCommand(cmd string) error {
	p := in.dirs.ConfigFile()
	src, err := os.ReadFile(p)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read %s: %w", p, err)
	}
	have, err := configPreviousCommand(src)
	if err != nil {
		return fmt.Errorf("%s: %w; fix it and run `synaxi install` again", p, err)
	}
	switch {
	case have == cmd:
		return nil
	case have != "":
		return fmt.Errorf("%s already sets statusline.previous_command = %q, and your status line runs %q; synaxi will not overwrite either\n  fix: set previous_command to the command you want first, then run `synaxi install` again", p, have, cmd)
	}
	line, err := previousCommandLine(cmd)
	if err != nil {
		return err
	}
	out, added, err := addPreviousCommand(src, line)
	if err != nil {
		return fmt.Errorf("%s: %w\n  fix: add `%s` under [statusline] yourself", p, err, line)
	}
	if err := in.j.MkdirAll(filepath.Dir(p), in.record); err != nil {
		return err
	}
	f, err := in.j.Backup(in.jdir, p)
	if err != nil {
		return err
	}
	if !slices.Contains(f.Lines, added) {
		f.Lines = append(f.Lines, added)
	}
	f.Wrote(out, "statusline.previous_command records your status line command")
	if err := in.record(); err != nil {
		return err
	}
	return journal.WriteFile(p, out, modeOf(p))
}

// route makes Claude Code send its model traffic to the proxy.
func (in *installer) route(url string) error {
	doc, err := in.readSettings()
	if err != nil {
		return err
	}
	if cur := doc.String("env", "ANTHROPIC_BASE_URL"); cur != "" && cur != url && !in.j.Routed {
		in.warnf("settings env.ANTHROPIC_BASE_URL is already %s; not routing through synaxi\n  fix: set proxy.upstream = %q in %s, remove env.ANTHROPIC_BASE_URL from settings.json, and run `synaxi install --route` again", cur, cur, in.dirs.ConfigFile())
		return nil
	}
	err = in.setSettings(doc,
		setting{[]string{"env", "ANTHROPIC_BASE_URL"}, url, "env.ANTHROPIC_BASE_URL routes model traffic through synaxi-proxyd"},
		setting{[]string{"env", "ENABLE_TOOL_SEARCH"}, "true", "env.ENABLE_TOOL_SEARCH keeps MCP tool search on behind a custom base URL"})
	if err != nil {
		return err
	}
	in.j.Routed = true
	in.say("routing: Claude Code's model traffic goes through %s", url)
	return nil
}

// linkCLI links synaxi into the user's bin dir (xdg.BinHome), so `synaxi`
// runs from any shell: a symlink to the stable copy, journaled as synaxi's
// own. A file of another kind already there is left alone with a warning.
func (in *installer) linkCLI() error {
	dir := xdg.BinHome()
	link, target := filepath.Join(dir, "synaxi"), filepath.Join(BinDir(in.dirs), "synaxi")
	if !isExec(target) {
		return nil // no CLI among the binaries (a partial --from): nothing to link
	}
	if cur, err := os.Readlink(link); err == nil && cur == target {
		in.say("cli: %s already links to %s%s", link, target, pathNote(dir, in.Getenv))
		return nil
	}
	if _, err := os.Lstat(link); err == nil {
		in.warnf("%s exists and is not synaxi's link; left alone\n  fix: remove it, or run %s directly", link, target)
		return nil
	}
	if err := in.j.MkdirAll(dir, in.record); err != nil {
		return err
	}
	f, err := in.j.Backup(in.jdir, link)
	if err != nil {
		return err
	}
	f.Owned = true
	if err := f.Note("symlink to " + target); err != nil {
		return err
	}
	if err := in.record(); err != nil {
		return err
	}
	if err := os.Symlink(target, link); err != nil {
		return fmt.Errorf("link %s: %w", link, err)
	}
	in.say("cli: linked %s to %s%s", link, target, pathNote(dir, in.Getenv))
	return nil
}

// pathNote tells the user to add dir to PATH when it is not there.
func pathNote(dir string, getenv func(string) string) string {
	if slices.Contains(filepath.SplitList(getenv("PATH")), dir) {
		return ""
	}
	return " (add " + dir + " to PATH to run `synaxi` anywhere)"
}
