package setup

import (
	"context"
	"fmt"

	"github.com/synaxi/synaxi/installer/internal/proxyctl"
	"github.com/synaxi/synaxi/internal/hint"
)

// The proxy step starts synaxi-proxyd (replacing one of an older version or
// running an older configuration); its
// undo stops it. Neither is journaled: the proxy leaves no file of the
// user's changed.

// startProxy starts the proxy and returns its URL, "" when it did not
// start (warned about).
func (in *installer) startProxy(ctx context.Context) string {
	st, err := proxyctl.Start(ctx, ProxyBin(in.dirs), in.dirs, in.Env)
	if err != nil {
		in.warn(hint.Wrap(fmt.Errorf("proxy did not start: %w", err), "run `synaxi doctor`; the proxy binary is "+ProxyBin(in.dirs)))
		return ""
	}
	if r := st.Replaced; r != nil {
		in.say("proxy: replaced pid %d (%s; it drains what it has in flight) with version %s", r.PID, st.Why, st.Info.Version)
	}
	in.say("proxy: running at %s (pid %d)", st.URL(), st.Info.PID)
	if !st.Running {
		return ""
	}
	return st.URL()
}

// stopProxy stops the proxy, warning with the command when it cannot.
func (in *installer) stopProxy(ctx context.Context) {
	bin := ProxyBin(in.dirs)
	if err := proxyctl.Stop(ctx, bin, in.dirs, in.Env); err != nil {
		in.warn(hint.Wrap(fmt.Errorf("stop the proxy: %w", err), "run `"+bin+" stop`"))
		return
	}
	in.say("proxy: stopped")
}
