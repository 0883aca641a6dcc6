// Package fakes holds consumer-side test doubles for the installer's tests:
// a fake Claude Code CLI and a fake synaxi-proxyd, both run by re-executing
// the test binary. The fake CLI rewrites settings.json the way the real one
// does (re-encoded with two-space indent and rejecting comments), so
// byte-exact restore is tested against a client that reformats the file.
package fakes

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/synaxi/synaxi/internal/proxyinfo"
	"github.com/synaxi/synaxi/internal/statefile"
	"github.com/synaxi/synaxi/internal/xdg"
)

// Main runs the fake named by SYNAXI_TEST_FAKE, if any, and exits; call it
// first thing in TestMain. extra handles other modes a package adds.
func Main(extra map[string]func(args []string) int) {
	mode := os.Getenv("SYNAXI_TEST_FAKE")
	switch mode {
	case "":
		return
	case "claude":
		os.Exit(fakeClaude(os.Args[1:]))
	case "proxyd":
		os.Exit(fakeProxyd(os.Args[1:]))
	}
	if f := extra[mode]; f != nil {
		os.Exit(f(os.Args[1:]))
	}
	fmt.Fprintln(os.Stderr, "unknown fake", mode)
	os.Exit(2)
}

// Script writes an executable sh script at path that re-runs the test
// binary as the fake named mode.
func Script(t testing.TB, path, mode string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf("#!/bin/sh\nSYNAXI_TEST_FAKE=%s exec %q \"$@\"\n", mode, exe)
	if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// Bins writes scripts named like the built binaries into a temp dir (the
// proxy is the fake proxyd; the others just print their name) and a fake
// claude CLI elsewhere.
func Bins(t testing.TB) (binDir, claudeBin string) {
	t.Helper()
	binDir = t.TempDir()
	Script(t, filepath.Join(binDir, "synaxi-proxyd"), "proxyd")
	for _, name := range []string{"synaxi-statusline", "synaxi-noreread"} {
		if err := os.WriteFile(filepath.Join(binDir, name), []byte("#!/bin/sh\necho "+name+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return binDir, Script(t, filepath.Join(t.TempDir(), "claude"), "claude")
}

func fakeClaude(args []string) int {
	dir := os.Getenv("CLAUDE_CONFIG_DIR")
	if dir == "" {
		dir = filepath.Join(os.Getenv("HOME"), ".claude")
	}
	settings := filepath.Join(dir, "settings.json")
	known := filepath.Join(dir, "plugins", "known_marketplaces.json")
	installed := filepath.Join(dir, "plugins", "installed_plugins.json")
	load := func(p string) map[string]any {
		m := map[string]any{}
		if data, err := os.ReadFile(p); err == nil {
			if json.Unmarshal(data, &m) != nil {
				fmt.Fprintln(os.Stderr, "Invalid JSON syntax in settings file at", p)
				os.Exit(1)
			}
		}
		return m
	}
	save := func(p string, m map[string]any) {
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		data, _ := json.MarshalIndent(m, "", "  ")
		_ = os.WriteFile(p, append(data, '\n'), 0o644)
	}
	sub := func(m map[string]any, k string) map[string]any {
		if v, ok := m[k].(map[string]any); ok {
			return v
		}
		v := map[string]any{}
		m[k] = v
		return v
	}
	cmd := strings.Join(args, " ")
	switch {
	case cmd == "plugin marketplace list --json":
		var out []map[string]any
		for name, v := range load(known) {
			out = append(out, map[string]any{"name": name, "source": "directory", "path": v.(map[string]any)["path"]})
		}
		data, _ := json.Marshal(out)
		fmt.Println(string(data))
	case cmd == "plugin list --json":
		s := load(settings)
		var out []map[string]any
		for id := range sub(load(installed), "plugins") {
			en, _ := sub(s, "enabledPlugins")[id].(bool)
			out = append(out, map[string]any{"id": id, "version": "0.1.0", "scope": "user", "enabled": en})
		}
		data, _ := json.Marshal(out)
		fmt.Println(string(data))
	case strings.HasPrefix(cmd, "plugin marketplace add "):
		s := load(settings)
		k := load(known)
		k["synaxi"] = map[string]any{"path": args[3]}
		sub(s, "extraKnownMarketplaces")["synaxi"] = map[string]any{"source": map[string]any{"source": "directory", "path": args[3]}}
		save(known, k)
		save(settings, s)
	case cmd == "plugin install synaxi@synaxi":
		s := load(settings)
		i := load(installed)
		i["version"] = 2
		sub(i, "plugins")["synaxi@synaxi"] = []any{map[string]any{"scope": "user"}}
		sub(s, "enabledPlugins")["synaxi@synaxi"] = true
		_ = os.MkdirAll(filepath.Join(dir, "plugins", "cache", "synaxi", "synaxi", "0.1.0"), 0o755)
		save(installed, i)
		save(settings, s)
	case cmd == "plugin uninstall synaxi@synaxi":
		s := load(settings)
		i := load(installed)
		delete(sub(i, "plugins"), "synaxi@synaxi")
		delete(sub(s, "enabledPlugins"), "synaxi@synaxi")
		save(installed, i)
		save(settings, s)
	case cmd == "plugin marketplace remove synaxi":
		s := load(settings)
		k := load(known)
		delete(k, "synaxi")
		delete(sub(s, "extraKnownMarketplaces"), "synaxi")
		save(known, k)
		save(settings, s)
	case cmd == "--version":
		fmt.Println("2.1.332 (Claude Code)")
	case len(args) > 1 && args[0] == "--agent":
		return fakeSession(args)
	default:
		fmt.Fprintln(os.Stderr, "fake claude: unknown command", cmd)
		return 1
	}
	return 0
}

// fakeSession stands in for an interactive or -p Claude Code launch: it
// records its arguments and environment to $SYNAXI_FAKE_RECORD once it
// handles signals, sleeps for
// $SYNAXI_FAKE_SLEEP (a duration) unless a signal comes first, and exits
// with $SYNAXI_FAKE_EXIT, or 100+signal number when signalled.
func fakeSession(args []string) int {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT)
	rec := map[string]any{"args": args, "env": os.Environ(), "pid": os.Getpid()}
	data, _ := json.Marshal(rec)
	if p := os.Getenv("SYNAXI_FAKE_RECORD"); p != "" {
		_ = os.WriteFile(p+".tmp", data, 0o600)
		_ = os.Rename(p+".tmp", p)
	}
	if d, err := time.ParseDuration(os.Getenv("SYNAXI_FAKE_SLEEP")); err == nil {
		select {
		case s := <-sig:
			return 100 + int(s.(syscall.Signal))
		case <-time.After(d):
		}
	}
	code, _ := strconv.Atoi(os.Getenv("SYNAXI_FAKE_EXIT"))
	return code
}

func fakeProxyd(args []string) int {
	d := xdg.Resolve()
	switch args[0] {
	case "start":
		if info, err := proxyinfo.Read(d); err == nil && syscall.Kill(info.PID, 0) == nil {
			return 0
		}
		exe, _ := os.Executable()
		cmd := exec.Command(exe, "serve")
		cmd.Env = os.Environ()
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			return 1
		}
		_ = cmd.Process.Release()
		for range 200 {
			if _, err := proxyinfo.Read(d); err == nil {
				return 0
			}
			time.Sleep(10 * time.Millisecond)
		}
		return 1
	case "serve":
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 1
		}
		port := ln.Addr().(*net.TCPAddr).Port
		_ = statefile.WriteJSON(proxyinfo.Path(d), proxyinfo.Info{PID: os.Getpid(), Addr: ln.Addr().String(), Port: port, Version: "fake", Started: time.Now()})
		mux := http.NewServeMux()
		mux.HandleFunc("/health", func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprint(w, `{"version":"fake","upstream":"http://upstream.invalid","requests":0}`)
		})
		_ = http.Serve(ln, mux)
		return 0
	case "stop":
		info, err := proxyinfo.Read(d)
		if err != nil {
			return 0
		}
		_ = syscall.Kill(info.PID, syscall.SIGTERM)
		_ = os.Remove(proxyinfo.Path(d))
		return 0
	}
	return 2
}
