package setup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/synaxi/synaxi/installer/internal/endpoint"
	"github.com/synaxi/synaxi/installer/internal/proxyctl"
	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/hint"
)

// The routing step (--route) has two halves. Before the proxy starts,
// keepEndpoint makes the endpoint Claude Code uses now (a company gateway
// in ANTHROPIC_BASE_URL, from settings or the shell) the proxy's upstream,
// as proxy.upstream in config.toml, so the proxy (re)starts with it. Once
// it runs, route points Claude Code's model traffic at the proxy through
// settings.json env keys. Credentials are not touched: Claude Code keeps
// sending its token, API key, apiKeyHelper value and custom headers, now to
// the proxy, which forwards them unchanged. Undo: the settings keys get
// their previous values back through the journal (revertKeys in
// settings.go), the config.toml line comes out (revertLines).

// managedSettings is the managed settings file Claude Code reads before the
// user's; tests point it elsewhere.
var managedSettings = endpoint.ManagedPath()

// keepEndpoint reads the endpoint Claude Code would use and, when it is a
// gateway, makes it the proxy's upstream. It reports whether routing can
// go on; when not, it has warned why.
func (in *installer) keepEndpoint() (bool, error) {
	doc, err := in.readSettings()
	if err != nil {
		return false, err
	}
	ep := endpoint.Read(endpoint.Sources{Managed: endpoint.ReadManaged(managedSettings), User: doc, Getenv: in.Getenv})
	if why, fix := ep.NotRoutable(); why != "" {
		in.warn(hint.New(why, fix))
		return false, nil
	}
	base := ep.BaseURL
	if base.From == "managed settings env" && !proxyctl.IsProxy(in.dirs, base.Value) {
		in.warn(hint.New("not routing: managed settings ("+managedSettings+") set ANTHROPIC_BASE_URL="+base.Value+", which wins over your settings and environment, so Claude Code would never reach the proxy",
			"ask whoever manages that file to point ANTHROPIC_BASE_URL at the proxy and set proxy.upstream = \""+base.Value+"\" for it"))
		return false, nil
	}
	creds := "its own login"
	if len(ep.Credentials) > 0 {
		creds = strings.Join(ep.Credentials, ", ")
	}
	if base.Value == "" || proxyctl.IsProxy(in.dirs, base.Value) {
		in.say("routing: credentials stay with Claude Code (%s); the proxy forwards them and stores none", creds)
		return true, nil
	}
	l, err := config.Load(in.dirs.ConfigFile(), in.Getenv)
	if err != nil {
		return false, hint.Wrap(fmt.Errorf("routing: %w", err), "fix the configuration (`synaxi doctor` shows it) and run `synaxi install --route` again")
	}
	cur := l.Setting("proxy.upstream")
	switch {
	case sameURL(cur.Value, base.Value):
	case cur.Source != config.FromDefault:
		in.warn(hint.New(fmt.Sprintf("not routing: Claude Code talks to %s (%s), but proxy.upstream is %s (%s %s), so routed traffic would go elsewhere", base.Value, base.From, cur.Value, cur.Source, cur.Origin),
			fmt.Sprintf("set proxy.upstream = %q (or remove it and it follows ANTHROPIC_BASE_URL), then run `synaxi install --route` again", base.Value)))
		return false, nil
	default:
		src, err := os.ReadFile(in.dirs.ConfigFile())
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return false, fmt.Errorf("read %s: %w", in.dirs.ConfigFile(), err)
		}
		if err := in.addConfigLine(src, "proxy", "upstream", base.Value, "proxy.upstream keeps the endpoint Claude Code used before routing ("+base.From+")"); err != nil {
			return false, err
		}
	}
	in.say("routing: keeps your endpoint: the proxy forwards to %s (ANTHROPIC_BASE_URL, %s); credentials stay with Claude Code (%s), the proxy forwards them and stores none", base.Value, base.From, creds)
	return true, nil
}

// sameURL compares two base URLs, ignoring a trailing slash.
func sameURL(a, b string) bool {
	return strings.TrimRight(a, "/") == strings.TrimRight(b, "/")
}

// route makes Claude Code send its model traffic to the proxy at url; ""
// means the proxy is not running, and routing is skipped with a warning.
func (in *installer) route(url string) error {
	if url == "" {
		in.warn(hint.New("not routing Claude Code through the proxy: the proxy is not running",
			"start it (`"+ProxyBin(in.dirs)+" start`) and run `synaxi install --route` again"))
		return nil
	}
	doc, err := in.readSettings()
	if err != nil {
		return err
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
