package setup

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/synaxi/synaxi/installer/internal/jsonedit"
	"github.com/synaxi/synaxi/internal/proxyinfo"
	"github.com/synaxi/synaxi/internal/statefile"
	"github.com/synaxi/synaxi/internal/xdg"
)

// The test binary doubles as a fake Claude Code CLI and a fake
// synaxi-proxyd (consumer-side fakes), selected by SYNAXI_TEST_FAKE. The
// fake CLI rewrites settings.json the way the real one does (re-encoded with
// two-space indent), so byte-exact restore is tested against a client that
// reformats the file.
func TestMain(m *testing.M) {
	switch os.Getenv("SYNAXI_TEST_FAKE") {
	case "claude":
		os.Exit(fakeClaude(os.Args[1:]))
	case "proxyd":
		os.Exit(fakeProxyd(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// fakeBins writes scripts named like the real binaries into a temp dir.
func fakeBins(t *testing.T) (binDir, claudeBin string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	binDir = t.TempDir()
	script := func(name, mode string) string {
		p := filepath.Join(binDir, name)
		body := fmt.Sprintf("#!/bin/sh\nSYNAXI_TEST_FAKE=%s exec %q \"$@\"\n", mode, exe)
		if mode == "" {
			body = "#!/bin/sh\necho " + name + "\n"
		}
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	script("synaxi-proxyd", "proxyd")
	script("synaxi-statusline", "")
	script("synaxi-noreread", "")
	claudeBin = filepath.Join(t.TempDir(), "claude")
	body := fmt.Sprintf("#!/bin/sh\nSYNAXI_TEST_FAKE=claude exec %q \"$@\"\n", exe)
	if err := os.WriteFile(claudeBin, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return binDir, claudeBin
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
			if blank, _ := jsonedit.Blank(data); string(blank) != string(data) || json.Unmarshal(data, &m) != nil {
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
	case len(args) > 0 && args[0] == "sleep":
		d, _ := time.ParseDuration(args[1])
		time.Sleep(d)
	default:
		fmt.Fprintln(os.Stderr, "fake claude: unknown command", cmd)
		return 1
	}
	return 0
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
