package main

import (
	"context"
	"fmt"
	"io"

	"github.com/synaxi/synaxi/internal/cmdline"

	"github.com/synaxi/synaxi/installer/internal/proxyctl"
	"github.com/synaxi/synaxi/installer/internal/setup"
	"github.com/synaxi/synaxi/internal/hint"
	"github.com/synaxi/synaxi/internal/xdg"
)

// runProxy is `synaxi proxy restart`: the running proxy is replaced by one
// that reads the configuration again, without dropping a request.
func runProxy(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "restart" {
		fmt.Fprintln(stderr, "usage: synaxi proxy restart   (apply a changed configuration: the proxy is replaced without dropping a request)")
		return 2
	}
	fs := cmdline.Flags("proxy restart", stderr)
	if fs.Parse(args[1:]) != nil {
		return 2
	}
	d := xdg.Resolve()
	st, err := proxyctl.Restart(ctx, setup.ProxyBin(d), d, nil)
	if err != nil {
		return cmdline.Fail(stderr, hint.Wrap(err, "run `synaxi doctor`; the proxy's log is under "+d.StatePath("proxyd")))
	}
	if r := st.Replaced; r != nil {
		fmt.Fprintf(stdout, "proxy: replaced pid %d (it drains what it has in flight) with pid %d at %s, configuration %s, upstream %s\n",
			r.PID, st.Info.PID, st.URL(), st.Health.Config, st.Health.Upstream)
		return 0
	}
	fmt.Fprintf(stdout, "proxy: was not running; started pid %d at %s, configuration %s, upstream %s\n", st.Info.PID, st.URL(), st.Health.Config, st.Health.Upstream)
	return 0
}
