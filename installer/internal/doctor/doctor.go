// Package doctor implements `synaxi status` (what is set up and running,
// and the savings so far) and `synaxi doctor` (every check with a fix hint,
// then the effective configuration with where each value came from).
package doctor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/synaxi/synaxi/installer/internal/claude"
	"github.com/synaxi/synaxi/installer/internal/journal"
	"github.com/synaxi/synaxi/installer/internal/jsonedit"
	"github.com/synaxi/synaxi/installer/internal/proxyctl"
	"github.com/synaxi/synaxi/installer/internal/savings"
	"github.com/synaxi/synaxi/installer/internal/setup"
	"github.com/synaxi/synaxi/installer/internal/wrap"
	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/xdg"
)

// Env is what status and doctor look at.
type Env struct {
	Getenv func(string) string
	Claude string // --claude, if given
}

// Check is one doctor check.
type Check struct {
	Name   string
	OK     bool
	Warn   bool // not fatal
	Detail string
	Fix    string
}

// facts gathers what both commands show.
type facts struct {
	d        xdg.Dirs
	cdir     string
	settings []byte
	setErr   error
	proxy    *proxyctl.State
	routeURL string
	wraps    []*wrap.Marker
}

func gather(ctx context.Context, e Env) *facts {
	f := &facts{d: xdg.Resolve(), cdir: claude.Dir(e.Getenv)}
	f.settings, f.setErr = os.ReadFile(claude.SettingsPath(f.cdir))
	if errors.Is(f.setErr, fs.ErrNotExist) {
		f.setErr = nil
	}
	f.proxy = proxyctl.Inspect(ctx, f.d)
	f.routeURL = jsonedit.GetString(f.settings, "env", "ANTHROPIC_BASE_URL")
	f.wraps, _ = wrap.Markers(f.d)
	return f
}

func (f *facts) composed() bool {
	return jsonedit.GetString(f.settings, "statusLine", "command") == setup.StatusLineCommand(f.d)
}

func (f *facts) routedToProxy() bool {
	u, err := url.Parse(f.routeURL)
	if err != nil || f.routeURL == "" {
		return false
	}
	return u.Hostname() == "127.0.0.1" || u.Hostname() == "localhost"
}

// Status prints a short summary.
func Status(ctx context.Context, w io.Writer, e Env) error {
	f := gather(ctx, e)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "proxy\t%s\n", proxyLine(f.proxy))
	inst, en := claude.InstalledOffline(f.cdir)
	switch {
	case inst && en:
		fmt.Fprintf(tw, "plugin\t%s installed and enabled\n", claude.PluginID)
	case inst:
		fmt.Fprintf(tw, "plugin\t%s installed but disabled\n", claude.PluginID)
	default:
		fmt.Fprintf(tw, "plugin\tnot installed (run `synaxi install`)\n")
	}
	if f.composed() {
		prev := ""
		if l, err := config.LoadDefault(f.d.ConfigFile()); err == nil && l.StatusLine.PreviousCommand != "" {
			prev = " (after yours: " + l.StatusLine.PreviousCommand + ")"
		}
		fmt.Fprintf(tw, "status line\tcomposed%s\n", prev)
	} else {
		fmt.Fprintf(tw, "status line\tnot composed (run `synaxi install`)\n")
	}
	active := 0
	for _, m := range f.wraps {
		if m.InUse() {
			active++
		}
	}
	switch {
	case f.routedToProxy():
		fmt.Fprintf(tw, "routing\tevery Claude Code session, via settings env ANTHROPIC_BASE_URL=%s\n", f.routeURL)
	case active > 0:
		fmt.Fprintf(tw, "routing\t%d wrapped launch(es) running\n", active)
	default:
		fmt.Fprintf(tw, "routing\tnot routed (use `synaxi wrap claude` for one launch, or `synaxi install --route`)\n")
	}
	rows, skipped, err := savings.Load(f.d)
	if err != nil {
		fmt.Fprintf(tw, "ledger\tunreadable: %v\n", err)
	} else {
		rep := savings.Build(rows, "")
		rep.Skipped = skipped
		t := rep.Total
		fmt.Fprintf(tw, "ledger\t%d sessions, %d requests (%d measured): saved %d tokens, $%.4f; %d probe failures, %d fail-opens\n",
			len(rep.Sessions), t.Requests, t.Measured, t.SavedTokens, t.SavedUSD, t.ProbeFailures, t.FailOpenRows)
	}
	return tw.Flush()
}

func proxyLine(st *proxyctl.State) string {
	switch {
	case st.Running:
		h := st.Health
		return fmt.Sprintf("running at %s (pid %d, version %s, upstream %s): %d requests, %d projected, %d fail-opens",
			st.URL(), st.Info.PID, h.Version, h.Upstream, h.Requests, h.Projected, h.FailOpens)
	case st.Info != nil && st.Alive:
		return fmt.Sprintf("pid %d alive but /health does not answer at %s: %v", st.Info.PID, st.Info.Addr, st.Err)
	case st.Info != nil:
		return fmt.Sprintf("down (stale record for pid %d)", st.Info.PID)
	default:
		return "down"
	}
}

// Doctor runs every check, prints them with fixes, then the effective
// configuration. It returns how many checks failed.
func Doctor(ctx context.Context, w io.Writer, e Env) int {
	f := gather(ctx, e)
	checks, loaded := checks(ctx, f, e)
	failed := 0
	for _, c := range checks {
		mark := "ok  "
		switch {
		case !c.OK && c.Warn:
			mark = "warn"
		case !c.OK:
			mark = "FAIL"
			failed++
		}
		fmt.Fprintf(w, "[%s] %s: %s\n", mark, c.Name, c.Detail)
		if !c.OK && c.Fix != "" {
			fmt.Fprintf(w, "       fix: %s\n", c.Fix)
		}
	}
	fmt.Fprintf(w, "\neffective configuration (%s):\n", f.d.ConfigFile())
	settings := loaded
	if settings == nil {
		fmt.Fprintf(w, "  (the config does not load; showing defaults)\n")
		settings = config.Documented()
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, s := range settings {
		from := string(s.Source)
		if s.Origin != "" {
			from += " " + s.Origin
		}
		fmt.Fprintf(tw, "  %s\t= %q\t(%s)\t%s\n", s.Key, s.Value, from, s.Env)
	}
	tw.Flush()
	return failed
}

func checks(ctx context.Context, f *facts, e Env) ([]Check, []config.Setting) {
	var cs []Check
	add := func(c Check) { cs = append(cs, c) }

	var settings []config.Setting
	l, err := config.Load(f.d.ConfigFile(), e.Getenv)
	if err != nil {
		add(Check{Name: "config", Detail: err.Error(), Fix: "correct the named key in " + f.d.ConfigFile() + " (or the SYNAXI_* variable)"})
	} else {
		settings = l.Settings
		add(Check{Name: "config", OK: true, Detail: "loads and validates"})
	}

	bin := setup.BinDir(f.d)
	var missing []string
	for _, b := range setup.Binaries {
		if fi, err := os.Stat(filepath.Join(bin, b)); err != nil || fi.Mode()&0o111 == 0 {
			missing = append(missing, b)
		}
	}
	if len(missing) == 0 {
		add(Check{Name: "binaries", OK: true, Detail: "all in " + bin})
	} else {
		add(Check{Name: "binaries", Detail: "missing from " + bin + ": " + strings.Join(missing, ", "),
			Fix: "run `make build && plugin/bin/synaxi install` in the checkout"})
	}

	if cli, err := claude.Find(e.Claude, e.Getenv); err != nil {
		add(Check{Name: "claude CLI", Detail: err.Error(), Fix: claude.Fix})
	} else {
		v, err := (&claude.CLI{Bin: cli}).Version(ctx)
		if err != nil {
			add(Check{Name: "claude CLI", Detail: err.Error(), Fix: "check that `" + cli + " --version` runs"})
		} else {
			add(Check{Name: "claude CLI", OK: true, Detail: cli + " " + v})
		}
	}

	switch {
	case f.setErr != nil:
		add(Check{Name: "settings.json", Detail: f.setErr.Error(), Fix: "make " + claude.SettingsPath(f.cdir) + " readable"})
	case jsonedit.Check(f.settings) != nil:
		add(Check{Name: "settings.json", Detail: jsonedit.Check(f.settings).Error(), Fix: "fix the JSON in " + claude.SettingsPath(f.cdir)})
	default:
		if _, comments := jsonedit.Blank(f.settings); comments {
			add(Check{Name: "settings.json", Detail: "has comments, which Claude Code rejects", Fix: "remove the comments from " + claude.SettingsPath(f.cdir)})
		} else {
			add(Check{Name: "settings.json", OK: true, Detail: claude.SettingsPath(f.cdir)})
		}
	}

	inst, en := claude.InstalledOffline(f.cdir)
	switch {
	case inst && en:
		add(Check{Name: "plugin", OK: true, Detail: claude.PluginID + " installed and enabled"})
	case inst:
		add(Check{Name: "plugin", Detail: claude.PluginID + " installed but disabled", Fix: "claude plugin enable " + claude.PluginID})
	default:
		add(Check{Name: "plugin", Detail: claude.PluginID + " not installed", Fix: "synaxi install"})
	}

	if f.composed() {
		c := Check{Name: "status line", OK: true, Detail: "runs " + setup.StatusLineCommand(f.d)}
		if _, err := os.Stat(filepath.Join(bin, "synaxi-statusline")); err != nil {
			c = Check{Name: "status line", Detail: "points at a missing synaxi-statusline", Fix: "synaxi install"}
		}
		add(c)
	} else {
		add(Check{Name: "status line", Warn: true, Detail: "not composed: statusLine.command is " + fmt.Sprintf("%q", jsonedit.GetString(f.settings, "statusLine", "command")), Fix: "synaxi install"})
	}

	if f.proxy.Running {
		add(Check{Name: "proxy", OK: true, Detail: proxyLine(f.proxy)})
	} else {
		add(Check{Name: "proxy", Warn: !f.routedToProxy(), Detail: proxyLine(f.proxy) + errText(f.proxy.Err),
			Fix: "start it: " + setup.ProxyBin(f.d) + " start (its log is under " + f.d.StatePath("proxyd") + ")"})
	}

	if f.routedToProxy() {
		tool := jsonedit.GetString(f.settings, "env", "ENABLE_TOOL_SEARCH")
		switch {
		case !f.proxy.Running:
			add(Check{Name: "routing", Detail: "settings route Claude Code to " + f.routeURL + " but the proxy is down: every request fails",
				Fix: "start the proxy (" + setup.ProxyBin(f.d) + " start), or `synaxi uninstall` to stop routing"})
		case f.proxy.URL() != f.routeURL:
			add(Check{Name: "routing", Detail: "settings route to " + f.routeURL + " but the proxy listens at " + f.proxy.URL(),
				Fix: "synaxi install --route (rewrites the address), or pin proxy.port in the config"})
		case tool != "true":
			add(Check{Name: "routing", Warn: true, Detail: "routed, but env.ENABLE_TOOL_SEARCH is not true: MCP tool search is off behind a custom base URL", Fix: "synaxi install --route"})
		default:
			add(Check{Name: "routing", OK: true, Detail: "settings route Claude Code through " + f.routeURL})
		}
	} else {
		add(Check{Name: "routing", OK: true, Detail: "not routed by settings (synaxi wrap claude routes one launch)"})
	}

	stale := 0
	for _, m := range f.wraps {
		if !m.InUse() {
			stale++
		}
	}
	if stale > 0 {
		add(Check{Name: "wraps", Detail: fmt.Sprintf("%d wrap(s) ended without restoring", stale), Fix: "synaxi unwrap"})
	} else {
		add(Check{Name: "wraps", OK: true, Detail: fmt.Sprintf("%d running, none stale", len(f.wraps))})
	}

	if _, skipped, err := savings.Load(f.d); err != nil {
		add(Check{Name: "ledger", Detail: err.Error(), Fix: "check permissions of " + f.d.StatePath("ledger")})
	} else if skipped > 0 {
		add(Check{Name: "ledger", Warn: true, Detail: fmt.Sprintf("%d malformed lines skipped", skipped)})
	} else {
		add(Check{Name: "ledger", OK: true, Detail: "readable"})
	}

	if journal.Exists(journal.Dir(f.d)) {
		add(Check{Name: "install journal", OK: true, Detail: journal.Dir(f.d) + " (synaxi uninstall restores from it)"})
	} else {
		add(Check{Name: "install journal", Warn: true, Detail: "none: synaxi is not installed", Fix: "synaxi install"})
	}
	return cs, settings
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return ": " + err.Error()
}
