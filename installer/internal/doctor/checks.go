package doctor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/synaxi/synaxi/installer/internal/claude"
	"github.com/synaxi/synaxi/installer/internal/journal"
	"github.com/synaxi/synaxi/installer/internal/savings"
	"github.com/synaxi/synaxi/installer/internal/settings"
	"github.com/synaxi/synaxi/installer/internal/setup"
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
	checkRouting,
	checkWraps,
	checkLedger,
	checkJournal,
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
		return Check{Name: "config", Detail: f.configErr.Error(), Fix: "correct the named key in " + f.d.ConfigFile() + " (or the SYNAXI_* variable)"}
	}
	return Check{Name: "config", OK: true, Detail: "loads and validates"}
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
		return Check{Name: "binaries", Detail: "missing from " + bin + ": " + strings.Join(missing, ", "),
			Fix: setup.RebuildHint()}
	}
	return Check{Name: "binaries", OK: true, Detail: "all in " + bin}
}

func checkClaudeCLI(ctx context.Context, f *facts) Check {
	cli, err := claude.Find(f.env.Claude, f.env.Getenv)
	if err != nil {
		return Check{Name: "claude CLI", Detail: err.Error(), Fix: claude.Fix}
	}
	v, err := (&claude.CLI{Bin: cli}).Version(ctx)
	if err != nil {
		return Check{Name: "claude CLI", Detail: err.Error(), Fix: "check that `" + cli + " --version` runs"}
	}
	return Check{Name: "claude CLI", OK: true, Detail: cli + " " + v}
}

func checkSettingsFile(_ context.Context, f *facts) Check {
	path := claude.SettingsPath(f.cdir)
	var se *settings.SyntaxError
	switch {
	case errors.As(f.setErr, &se):
		return Check{Name: "settings.json", Detail: fmt.Sprintf("%s is not valid JSON at line %d, column %d: %s", path, se.Line, se.Col, se.Msg), Fix: se.Hint}
	case f.setErr != nil:
		return Check{Name: "settings.json", Detail: f.setErr.Error(), Fix: "make " + path + " readable"}
	}
	return Check{Name: "settings.json", OK: true, Detail: path}
}

func checkPlugin(_ context.Context, f *facts) Check {
	switch inst, en := claude.InstalledOffline(f.cdir); {
	case inst && en:
		return Check{Name: "plugin", OK: true, Detail: claude.PluginID + " installed and enabled"}
	case inst:
		return Check{Name: "plugin", Detail: claude.PluginID + " installed but disabled", Fix: "claude plugin enable " + claude.PluginID}
	default:
		return Check{Name: "plugin", Detail: claude.PluginID + " not installed", Fix: setup.PluginHint()}
	}
}

func checkStatusLine(_ context.Context, f *facts) Check {
	if !f.composed() {
		return Check{Name: "status line", Warn: true, Detail: fmt.Sprintf("not composed: statusLine.command is %q", f.setting("statusLine", "command")), Fix: "synaxi install"}
	}
	if _, err := os.Stat(filepath.Join(setup.BinDir(f.d), "synaxi-statusline")); err != nil {
		return Check{Name: "status line", Detail: "points at a missing synaxi-statusline", Fix: "synaxi install"}
	}
	return Check{Name: "status line", OK: true, Detail: "runs " + setup.StatusLineCommand(f.d)}
}

func checkProxy(_ context.Context, f *facts) Check {
	if f.proxy.Running {
		return Check{Name: "proxy", OK: true, Detail: proxyLine(f.proxy)}
	}
	return Check{Name: "proxy", Warn: !f.routedToProxy(), Detail: proxyLine(f.proxy) + errText(f.proxy.Err),
		Fix: "start it: " + setup.ProxyBin(f.d) + " start (its log is under " + f.d.StatePath("proxyd") + ")"}
}

func checkRouting(_ context.Context, f *facts) Check {
	if !f.routedToProxy() {
		return Check{Name: "routing", OK: true, Detail: "not routed by settings (synaxi wrap claude routes one launch)"}
	}
	switch {
	case !f.proxy.Running:
		return Check{Name: "routing", Detail: "settings route Claude Code to " + f.routeURL + " but the proxy is down: every request fails",
			Fix: "start the proxy (" + setup.ProxyBin(f.d) + " start), or `synaxi uninstall` to stop routing"}
	case f.proxy.URL() != f.routeURL:
		return Check{Name: "routing", Detail: "settings route to " + f.routeURL + " but the proxy listens at " + f.proxy.URL(),
			Fix: "synaxi install --route (rewrites the address), or pin proxy.port in the config"}
	case f.setting("env", "ENABLE_TOOL_SEARCH") != "true":
		return Check{Name: "routing", Warn: true, Detail: "routed, but env.ENABLE_TOOL_SEARCH is not true: MCP tool search is off behind a custom base URL", Fix: "synaxi install --route"}
	default:
		return Check{Name: "routing", OK: true, Detail: "settings route Claude Code through " + f.routeURL}
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
		return Check{Name: "wraps", Detail: fmt.Sprintf("%d wrap(s) ended without restoring", stale), Fix: "synaxi unwrap"}
	}
	return Check{Name: "wraps", OK: true, Detail: fmt.Sprintf("%d running, none stale", len(f.wraps))}
}

func checkLedger(_ context.Context, f *facts) Check {
	_, skipped, err := savings.Load(f.d)
	switch {
	case err != nil:
		return Check{Name: "ledger", Detail: err.Error(), Fix: "check permissions of " + f.d.StatePath("ledger")}
	case skipped > 0:
		return Check{Name: "ledger", Warn: true, Detail: fmt.Sprintf("%d malformed lines skipped", skipped)}
	default:
		return Check{Name: "ledger", OK: true, Detail: "readable"}
	}
}

func checkJournal(_ context.Context, f *facts) Check {
	if !journal.Exists(journal.Dir(f.d)) {
		return Check{Name: "install journal", Warn: true, Detail: "none: synaxi is not installed", Fix: "synaxi install"}
	}
	return Check{Name: "install journal", OK: true, Detail: journal.Dir(f.d) + " (synaxi uninstall restores from it)"}
}
