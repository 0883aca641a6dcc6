// Package fakes holds consumer-side test doubles for the installer's tests,
// run as testscript commands (testscript.Main puts each on PATH as a copy
// of the test binary): a fake Claude Code CLI named claude and a fake
// synaxi-proxyd.
//
// The fake CLI rewrites settings.json the way the real one does (decoded
// and re-encoded with two-space indent, refusing anything that is not
// plain JSON), so byte-exact restore is tested against a client that
// reformats the file; with SYNAXI_FAKE_BREAK_SETTINGS set, `plugin
// marketplace add` leaves settings.json unreadable (a directory). Run with
// --agent it stands in for a Claude Code session and records what it was
// started with (see Session). The fake proxy answers /health on a loopback
// port and writes the proxy record the way the real one does, so the
// installer's liveness checks see it.
package fakes

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/proxyinfo"
	"github.com/synaxi/synaxi/internal/statefile"
	"github.com/synaxi/synaxi/internal/xdg"
)

// Commands are the fakes by the names the installer runs them under, for
// testscript.Main.
func Commands() map[string]func() {
	return map[string]func(){
		"claude":        func() { os.Exit(Claude(os.Args[1:])) },
		"synaxi-proxyd": func() { os.Exit(Proxyd(os.Args[1:])) },
	}
}

// FakeLanguages is what the fake synaxi-mapgen answers to `languages
// --json`: a build with every language.
const FakeLanguages = `{"parsed":["bash","c","cpp","csharp","go","java","javascript","python","ruby","rust","tsx","typescript"],"missing":[]}`

// BinSource fills dir with stand-ins for the binaries `make build` puts in
// plugin/bin (names): synaxi-proxyd runs the fake proxy (found on PATH
// now, so the copy install makes keeps working when PATH changes), and the
// others print their names (synaxi-mapgen also answers `languages`).
func BinSource(dir string, names []string) error {
	proxyd, err := exec.LookPath("synaxi-proxyd")
	if err != nil {
		return fmt.Errorf("the fake synaxi-proxyd is not on PATH (is testscript.Main in TestMain?): %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, name := range names {
		body := "#!/bin/sh\necho " + name + "\n"
		switch name {
		case "synaxi-proxyd":
			body = fmt.Sprintf("#!/bin/sh\nexec '%s' \"$@\"\n", proxyd)
		case "synaxi-mapgen": // doctor asks it for its languages
			body = "#!/bin/sh\nif [ \"$1\" = languages ]; then echo '" + FakeLanguages + "'; else echo " + name + "; fi\n"
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			return err
		}
	}
	return nil
}

// StopProxy stops a fake proxy left running under d, if any.
func StopProxy(d xdg.Dirs) {
	if info, err := proxyinfo.Read(d); err == nil && info.PID > 0 {
		_ = syscall.Kill(info.PID, syscall.SIGTERM)
		_ = os.Remove(proxyinfo.Path(d))
	}
}

// Claude is the fake Claude Code CLI; it returns the exit code.
func Claude(args []string) int {
	dir := os.Getenv("CLAUDE_CONFIG_DIR")
	if dir == "" {
		dir = filepath.Join(os.Getenv("HOME"), ".claude")
	}
	c := &cli{
		settings:  filepath.Join(dir, "settings.json"),
		known:     filepath.Join(dir, "plugins", "known_marketplaces.json"),
		installed: filepath.Join(dir, "plugins", "installed_plugins.json"),
	}
	cmd := strings.Join(args, " ")
	switch {
	case cmd == "plugin marketplace list --json":
		var out []map[string]any
		for name, v := range c.load(c.known) {
			out = append(out, map[string]any{"name": name, "source": "directory", "path": v.(map[string]any)["path"]})
		}
		printJSON(out)
	case cmd == "plugin list --json":
		s := c.load(c.settings)
		var out []map[string]any
		for id := range sub(c.load(c.installed), "plugins") {
			en, _ := sub(s, "enabledPlugins")[id].(bool)
			out = append(out, map[string]any{"id": id, "version": "0.1.0", "scope": "user", "enabled": en})
		}
		printJSON(out)
	case strings.HasPrefix(cmd, "plugin marketplace add "):
		s, k := c.load(c.settings), c.load(c.known)
		k["synaxi"] = map[string]any{"path": args[3]}
		sub(s, "extraKnownMarketplaces")["synaxi"] = map[string]any{"source": map[string]any{"source": "directory", "path": args[3]}}
		c.save(c.known, k)
		c.save(c.settings, s)
		if os.Getenv("SYNAXI_FAKE_BREAK_SETTINGS") != "" && c.err == nil {
			// Leave settings.json unreadable (a directory), for a journal
			// that cannot read back what the CLI changed.
			c.err = errors.Join(os.Remove(c.settings), os.Mkdir(c.settings, 0o755))
		}
	case cmd == "plugin install synaxi@synaxi":
		s, i := c.load(c.settings), c.load(c.installed)
		i["version"] = 2
		sub(i, "plugins")["synaxi@synaxi"] = []any{map[string]any{"scope": "user"}}
		sub(s, "enabledPlugins")["synaxi@synaxi"] = true
		_ = os.MkdirAll(filepath.Join(dir, "plugins", "cache", "synaxi", "synaxi", "0.1.0"), 0o755)
		c.save(c.installed, i)
		c.save(c.settings, s)
	case cmd == "plugin enable synaxi@synaxi":
		s := c.load(c.settings)
		sub(s, "enabledPlugins")["synaxi@synaxi"] = true
		c.save(c.settings, s)
	case cmd == "plugin uninstall synaxi@synaxi":
		s, i := c.load(c.settings), c.load(c.installed)
		delete(sub(i, "plugins"), "synaxi@synaxi")
		delete(sub(s, "enabledPlugins"), "synaxi@synaxi")
		c.save(c.installed, i)
		c.save(c.settings, s)
	case cmd == "plugin marketplace remove synaxi":
		s, k := c.load(c.settings), c.load(c.known)
		delete(k, "synaxi")
		delete(sub(s, "extraKnownMarketplaces"), "synaxi")
		c.save(c.known, k)
		c.save(c.settings, s)
	case cmd == "--version":
		fmt.Println("2.1.332 (Claude Code)")
	case len(args) > 1 && args[0] == "--agent":
		return Session(args)
	default:
		fmt.Fprintln(os.Stderr, "fake claude: unknown command", cmd)
		return 1
	}
	if c.err != nil {
		fmt.Fprintln(os.Stderr, c.err)
		return 1
	}
	return 0
}

// cli holds one fake CLI run's files and its first error.
type cli struct {
	settings, known, installed string
	err                        error
}

func (c *cli) load(p string) map[string]any {
	m := map[string]any{}
	data, err := os.ReadFile(p)
	if err != nil || c.err != nil {
		return m
	}
	if json.Unmarshal(data, &m) != nil {
		c.err = fmt.Errorf("invalid JSON syntax in settings file at %s", p)
	}
	return m
}

func (c *cli) save(p string, m map[string]any) {
	if c.err != nil {
		return // like the real CLI, nothing is written once a file did not read
	}
	data, _ := json.MarshalIndent(m, "", "  ")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		c.err = err
		return
	}
	if err := os.WriteFile(p, append(data, '\n'), 0o644); err != nil {
		c.err = err
	}
}

func sub(m map[string]any, k string) map[string]any {
	if v, ok := m[k].(map[string]any); ok {
		return v
	}
	v := map[string]any{}
	m[k] = v
	return v
}

func printJSON(v any) {
	data, _ := json.Marshal(v)
	fmt.Println(string(data))
}

// Session stands in for an interactive or -p Claude Code launch. Once it
// handles signals it writes $SYNAXI_FAKE_RECORD, one fact a line ("pid N",
// "ppid N", "arg A" per argument, "env K=V" per variable), so a script can
// grep it; then it sleeps for $SYNAXI_FAKE_SLEEP (a duration) unless a
// signal comes first, and exits with $SYNAXI_FAKE_EXIT, or 100+signal
// number when signalled (saying so on stderr).
func Session(args []string) int {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT)
	if p := os.Getenv("SYNAXI_FAKE_RECORD"); p != "" {
		var b strings.Builder
		fmt.Fprintf(&b, "pid %d\nppid %d\n", os.Getpid(), os.Getppid())
		for _, a := range args {
			fmt.Fprintf(&b, "arg %s\n", a)
		}
		for _, kv := range os.Environ() {
			fmt.Fprintf(&b, "env %s\n", kv)
		}
		_ = os.WriteFile(p+".tmp", []byte(b.String()), 0o600)
		_ = os.Rename(p+".tmp", p)
	}
	if d, err := time.ParseDuration(os.Getenv("SYNAXI_FAKE_SLEEP")); err == nil {
		select {
		case s := <-sig:
			fmt.Fprintf(os.Stderr, "fake claude: got %v\n", s)
			return 100 + int(s.(syscall.Signal))
		case <-time.After(d):
		}
	}
	code, _ := strconv.Atoi(os.Getenv("SYNAXI_FAKE_EXIT"))
	return code
}

// Proxyd is the fake synaxi-proxyd (start, start --takeover, stop, and the
// serve that start runs in the background); it returns the exit code.
func Proxyd(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: synaxi-proxyd start|stop")
		return 2
	}
	d := xdg.Resolve()
	switch args[0] {
	case "start":
		if info, err := proxyinfo.Read(d); err == nil && syscall.Kill(info.PID, 0) == nil {
			if !slices.Contains(args, "--takeover") {
				return 0
			}
			StopProxy(d) // the real one drains while its replacement serves
		}
		self, err := os.Executable()
		if err != nil {
			return 1
		}
		// testscript tells its commands apart by argv[0].
		cmd := &exec.Cmd{Path: self, Args: []string{"synaxi-proxyd", "serve"}, Env: os.Environ(),
			SysProcAttr: &syscall.SysProcAttr{Setsid: true}}
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "fake synaxi-proxyd:", err)
			return 1
		}
		_ = cmd.Process.Release()
		for range 500 {
			if _, err := proxyinfo.Read(d); err == nil {
				return 0
			}
			time.Sleep(10 * time.Millisecond)
		}
		return 1
	case "serve":
		// Like the real proxy, it listens on proxy.port when one is set and
		// reports the configuration it started with.
		cfg, err := config.LoadDirs(d, os.Getenv)
		if err != nil {
			return 1
		}
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(cfg.Proxy.Port)))
		if err != nil {
			return 1
		}
		port := ln.Addr().(*net.TCPAddr).Port
		info := proxyinfo.Info{PID: os.Getpid(), Addr: ln.Addr().String(), Port: port, Version: "fake", Started: time.Now()}
		if err := statefile.WriteJSON(proxyinfo.Path(d), info); err != nil {
			return 1
		}
		health, _ := json.Marshal(map[string]any{"version": "fake", "upstream": cfg.Proxy.Upstream, "config": cfg.ProxyFingerprint(), "projection": "worker", "requests": 0})
		mux := http.NewServeMux()
		mux.HandleFunc("/health", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(health) })
		_ = http.Serve(ln, mux)
		return 0
	case "stop":
		StopProxy(d)
		return 0
	}
	return 2
}
