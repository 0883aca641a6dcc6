package setup

import (
	"fmt"

	"github.com/synaxi/synaxi/installer/internal/hint"
)

// The routing step (--route) points Claude Code's model traffic at the
// proxy through settings.json env keys; its undo is the journal's
// (revertKeys in settings.go puts the previous values back).

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
	if cur := doc.String("env", "ANTHROPIC_BASE_URL"); cur != "" && cur != url && !in.j.Routed {
		in.warn(hint.New("settings env.ANTHROPIC_BASE_URL is already "+cur+"; not routing through synaxi",
			fmt.Sprintf("set proxy.upstream = %q in %s, remove env.ANTHROPIC_BASE_URL from settings.json, and run `synaxi install --route` again", cur, in.dirs.ConfigFile())))
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
