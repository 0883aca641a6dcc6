package doctor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/synaxi/synaxi/installer/internal/claude"
	"github.com/synaxi/synaxi/installer/internal/endpoint"
	"github.com/synaxi/synaxi/installer/internal/journal"
	"github.com/synaxi/synaxi/installer/internal/savings"
	"github.com/synaxi/synaxi/installer/internal/settings"
	"github.com/synaxi/synaxi/installer/internal/setup"
	"github.com/synaxi/synaxi/internal/hint"
)

// checklist is every doctor check, in the order they print. A check looks
// only at the gathered facts and reports one Check; adding a check is adding
// one function here.
var checklist = []func(context.Context, *facts) Check{
	checkConfig,
	checkBinaries,
	checkDownload,
	checkLanguages,
	checkClaudeCLI,
	checkSettingsFile,
	checkPlugin,
	checkStatusLine,
	checkProxy,
	checkProxyConfig,
	checkRouting,
	checkWraps,
	checkLedger,
	checkJournal,
	checkProfile,
}

func runChecks(ctx context.Context, f *facts) []Check {
	cs := make([]Check, 0, len(checklist))
	for _, check := range checklist {
		cs = append(cs, check(ctx, f))
	}
	return cs
}

func checkConfig(_ context.Context, f *facts) Check {
	if f.configErr != nil {
		return fails("config", f.configErr.Error(), "correct the named key in "+f.d.ConfigFile()+" (or the SYNAXI_* variable)")
	}
	return pass("config", "loads and validates")
}

func checkBinaries(_ context.Context, f *facts) Check {
	bin := setup.BinDir(f.d)
	var missing []string
	for _, b := range setup.Binaries {
		if fi, err := os.Stat(filepath.Join(bin, b)); err != nil || fi.Mode()&0o111 == 0 {
			missing = append(missing, b)
		}
	}
	if len(missing) > 0 {
		return fails("binaries", "missing from "+bin+": "+strings.Join(missing, ", "), setup.RebuildHint())
	}
	return pass("binaries", "all in "+bin)
}

func checkClaudeCLI(ctx context.Context, f *facts) Check {
	cli, err := claude.Find(f.env.Claude, f.env.Getenv)
	if err != nil {
		return fails("claude CLI", err.Error(), claude.Fix)
	}
	v, err := (&claude.CLI{Bin: cli}).Version(ctx)
	if err != nil {
		return fails("claude CLI", err.Error(), "check that `"+cli+" --version` runs")
	}
	return pass("claude CLI", cli+" "+v)
}

func checkSettingsFile(_ context.Context, f *facts) Check {
	path := claude.SettingsPath(f.cdir)
	var se *settings.SyntaxError
	switch {
	case errors.As(f.setErr, &se):
		return fails("settings.json", fmt.Sprintf("%s is not valid JSON at line %d, column %d: %s", path, se.Line, se.Col, se.Msg), se.Hint)
	case f.setErr != nil:
		return fails("settings.json", f.setErr.Error(), "make "+path+" readable")
	}
	return pass("settings.json", path)
}

func checkPlugin(_ context.Context, f *facts) Check {
	switch inst, en := claude.InstalledOffline(f.cdir); {
	case inst && en:
		return pass("plugin", claude.PluginID+" installed and enabled")
	case inst:
		return fails("plugin", claude.PluginID+" installed but disabled", "claude plugin enable "+claude.PluginID)
	default:
		return fails("plugin", claude.PluginID+" not installed", setup.PluginHint())
	}
}

func checkStatusLine(_ context.Context, f *facts) Check {
	if !f.composed() {
		return warns("status line", fmt.Sprintf("not composed: statusLine.command is %q", f.setting("statusLine", "command")), "synaxi install")
	}
	if _, err := os.Stat(filepath.Join(setup.BinDir(f.d), "synaxi-statusline")); err != nil {
		return fails("status line", "points at a missing synaxi-statusline", "synaxi install")
	}
	return pass("status line", "runs "+setup.StatusLineCommand(f.d))
}

func checkProxy(_ context.Context, f *facts) Check {
	if f.proxy.Running {
		if why, fix := upstreamFailing(f.proxy.Health); why != "" {
			return fails("proxy", proxyLine(f.proxy)+"; "+why, fix)
		}
		return pass("proxy", proxyLine(f.proxy))
	}
	return Check{Name: "proxy", Warn: !f.routedToProxy(), Err: hint.New(proxyLine(f.proxy)+errText(f.proxy.Err),
		"start it: "+setup.ProxyBin(f.d)+" start (its log is under "+f.d.StatePath("proxyd")+")")}
}

func checkRouting(_ context.Context, f *facts) Check {
	if !f.routedToProxy() {
		return pass("routing", "not routed by settings (synaxi wrap claude routes one launch)")
	}
	ep := endpoint.Read(endpoint.Sources{User: f.settings, Getenv: f.env.Getenv})
	if why, fix := ep.NotRoutable(); why != "" {
		return fails("routing", "settings route Claude Code to "+f.routeURL+", but "+strings.TrimPrefix(why, "not routing: "),
			fix, "or `synaxi uninstall` to stop routing")
	}
	switch {
	case !f.proxy.Running:
		return fails("routing", "settings route Claude Code to "+f.routeURL+" but the proxy is down: every request fails",
			"start the proxy ("+setup.ProxyBin(f.d)+" start), or `synaxi uninstall` to stop routing")
	case f.proxy.URL() != f.routeURL:
		return fails("routing", "settings route to "+f.routeURL+" but the proxy listens at "+f.proxy.URL(),
			"synaxi install --route (rewrites the address), or pin proxy.port in the config")
	case f.setting("env", "ENABLE_TOOL_SEARCH") != "true":
		return warns("routing", "routed, but env.ENABLE_TOOL_SEARCH is not true: MCP tool search is off behind a custom base URL", "synaxi install --route")
	default:
		return pass("routing", "settings route Claude Code through "+f.routeURL)
	}
}

func checkWraps(_ context.Context, f *facts) Check {
	stale := 0
	for _, m := range f.wraps {
		if !m.InUse() {
			stale++
		}
	}
	if stale > 0 {
		return fails("wraps", fmt.Sprintf("%d wrap(s) ended without restoring", stale), "synaxi unwrap")
	}
	return pass("wraps", fmt.Sprintf("%d running, none stale", len(f.wraps)))
}

func checkLedger(_ context.Context, f *facts) Check {
	_, skipped, err := savings.Load(f.d)
	switch {
	case err != nil:
		return fails("ledger", err.Error(), "check permissions of "+f.d.StatePath("ledger"))
	case skipped > 0:
		return warns("ledger", fmt.Sprintf("%d malformed lines skipped", skipped))
	default:
		return pass("ledger", "readable")
	}
}

func checkJournal(_ context.Context, f *facts) Check {
	if !journal.Exists(journal.Dir(f.d)) {
		return warns("install journal", "none: synaxi is not installed", "synaxi install")
	}
	return pass("install journal", journal.Dir(f.d)+" (synaxi uninstall restores from it)")
}
