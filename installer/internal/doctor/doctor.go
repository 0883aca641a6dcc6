// Package doctor implements `synaxi status` (what is set up and running,
// and the savings so far) and `synaxi doctor` (every check with a fix hint,
// then the effective configuration with where each value came from).
package doctor

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/synaxi/synaxi/installer/internal/claude"
	"github.com/synaxi/synaxi/installer/internal/endpoint"
	"github.com/synaxi/synaxi/installer/internal/proxyctl"
	"github.com/synaxi/synaxi/installer/internal/savings"
	"github.com/synaxi/synaxi/installer/internal/settings"
	"github.com/synaxi/synaxi/installer/internal/setup"
	"github.com/synaxi/synaxi/installer/internal/wrap"
	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/hint"
	"github.com/synaxi/synaxi/internal/ledger"
	"github.com/synaxi/synaxi/internal/xdg"
)

// Env is what status and doctor look at.
type Env struct {
	Getenv func(string) string
	Claude string // --claude, if given
	// More, if set, writes further "label\ttext" lines into Status's
	// table (the learning loop's profile and queue).
	More func(w io.Writer)
}

// Check is one doctor check: what a passing check found (Detail), or what
// is wrong (Err, a *hint.Error whose hints are the fixes: the type
// install's errors and warnings carry too).
type Check struct {
	Name   string
	Detail string
	Err    error // nil: the check passes
	Warn   bool  // Err does not fail doctor
}

// OK reports whether c passes.
func (c Check) OK() bool { return c.Err == nil }

func pass(name, detail string) Check { return Check{Name: name, Detail: detail} }

// fails is a failing check: what is wrong, then what fixes it.
func fails(name, detail string, fix ...string) Check {
	return Check{Name: name, Err: hint.New(detail, fix...)}
}

// warns is a check that reports a problem without failing doctor.
func warns(name, detail string, fix ...string) Check {
	c := fails(name, detail, fix...)
	c.Warn = true
	return c
}

// printChecks prints each check on a line, marked ok, warn or FAIL, with
// the hints of a problem under it, and returns how many failed.
func printChecks(w io.Writer, cs []Check) (failed int) {
	for _, c := range cs {
		mark := "ok  "
		switch {
		case c.OK():
			fmt.Fprintf(w, "[%s] %s: %s\n", mark, c.Name, c.Detail)
			continue
		case c.Warn:
			mark = "warn"
		default:
			mark = "FAIL"
			failed++
		}
		hint.Print(w, "["+mark+"] "+c.Name+": ", "       ", c.Err)
	}
	return failed
}

// facts gathers what both commands show.
type facts struct {
	env       Env
	config    *config.Loaded // nil when the config does not load
	configErr error
	d         xdg.Dirs
	cdir      string
	settings  *settings.Doc // nil when setErr says why
	setErr    error
	proxy     *proxyctl.State
	routeURL  string
	wraps     []*wrap.Marker
}

func gather(ctx context.Context, e Env) *facts {
	f := &facts{env: e, d: xdg.Resolve(), cdir: xdg.ClaudeDir(e.Getenv)}
	f.config, f.configErr = config.Load(f.d.ConfigFile(), e.Getenv)
	f.settings, f.setErr = settings.Read(claude.SettingsPath(f.cdir))
	f.proxy = proxyctl.Inspect(ctx, f.d)
	f.routeURL = f.setting("env", "ANTHROPIC_BASE_URL")
	f.wraps, _ = wrap.Markers(f.d)
	return f
}

// setting is the string at keys in settings.json, "" when it has none or
// the file does not read.
func (f *facts) setting(keys ...string) string {
	if f.settings == nil {
		return ""
	}
	return f.settings.String(keys...)
}

func (f *facts) composed() bool {
	return f.setting("statusLine", "command") == setup.StatusLineCommand(f.d)
}

func (f *facts) routedToProxy() bool {
	return f.routeURL != "" && endpoint.Loopback(f.routeURL)
}

// Route is what `synaxi savings` says about routing beside the ledger.
func Route(ctx context.Context, e Env) *savings.Route {
	return gather(ctx, e).route()
}

func (f *facts) route() *savings.Route {
	r := &savings.Route{Routed: f.routedToProxy()}
	for _, m := range f.wraps {
		r.Routed = r.Routed || m.InUse()
	}
	if f.config != nil {
		r.Scope = savings.ScopeOf(f.config.Proxy)
	}
	if !f.proxy.Running || f.proxy.Health == nil {
		return r
	}
	h := f.proxy.Health
	num := func(k string) int64 { v, _ := h.Raw[k].(float64); return int64(v) }
	p := &savings.ProxyCounts{Requests: h.Requests, Projected: h.Projected, FailOpens: h.FailOpens, Messages: num("messages"), Gated: num("gated")}
	if s, ok := h.Raw["started"].(string); ok {
		p.Started, _ = time.Parse(time.RFC3339Nano, s)
	}
	if s, ok := h.Raw["projection"].(string); ok && s != "" {
		r.Scope = s // what the running proxy uses
	}
	r.Proxy = p
	return r
}

// Status prints a short summary.
func Status(ctx context.Context, w io.Writer, e Env) error {
	f := gather(ctx, e)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "proxy\t%s%s\n", proxyLine(f.proxy), proxyNotes(f))
	inst, en := claude.InstalledOffline(f.cdir)
	switch {
	case inst && en:
		fmt.Fprintf(tw, "plugin\t%s installed and enabled\n", claude.PluginID)
	case inst:
		fmt.Fprintf(tw, "plugin\t%s installed but disabled\n", claude.PluginID)
	default:
		fmt.Fprintf(tw, "plugin\tnot installed (%s)\n", setup.PluginHint())
	}
	if f.composed() {
		prev := ""
		if f.config != nil && f.config.StatusLine.PreviousCommand != "" {
			prev = " (after yours: " + f.config.StatusLine.PreviousCommand + ")"
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
	fmt.Fprintf(tw, "loops\t%s\n", loopsLine(f.d))
	if e.More != nil {
		e.More(tw)
	}
	return tw.Flush()
}

// loopsLine is the loop governor's fires over every session
// (docs/governor.md).
func loopsLine(d xdg.Dirs) string {
	fires, stops, last, err := ledger.LoopTotals(d)
	if err != nil {
		return "unreadable: " + err.Error()
	}
	var total int64
	rules := make([]string, 0, len(fires))
	for r, n := range fires {
		total += n
		rules = append(rules, fmt.Sprintf("%s %d", r, n))
	}
	if total == 0 {
		return "the governor flagged no loop"
	}
	sort.Strings(rules)
	line := fmt.Sprintf("%d flagged (%s), %d stopped", total, strings.Join(rules, ", "), stops)
	if last != nil {
		line += fmt.Sprintf("; last: %s on %s, %s", last.Rule, last.Subject, last.At.Format(time.RFC3339))
	}
	return line
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
	failed := printChecks(w, runChecks(ctx, f))
	fmt.Fprintf(w, "\neffective configuration (%s):\n", f.d.ConfigFile())
	var effective []config.Setting
	if f.config != nil {
		effective = f.config.Settings
	} else {
		fmt.Fprintf(w, "  (the config does not load; showing defaults)\n")
		effective = config.Documented()
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, s := range effective {
		from := string(s.Source)
		if s.Origin != "" {
			from += " " + s.Origin
		}
		fmt.Fprintf(tw, "  %s\t= %q\t(%s)\t%s\n", s.Key, s.Value, from, s.Env)
	}
	tw.Flush()
	return failed
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return ": " + err.Error()
}
