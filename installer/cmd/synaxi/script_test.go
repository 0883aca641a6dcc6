package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/tidwall/gjson"

	"github.com/synaxi/synaxi/installer/internal/fakes"
	"github.com/synaxi/synaxi/installer/internal/setup"
	"github.com/synaxi/synaxi/internal/xdg"
)

var update = flag.Bool("update", false, "rewrite the expected files of failing cmp commands in testdata/script")

// TestMain lets the test binary run as synaxi itself and as the fakes
// (claude, synaxi-proxyd) that testscript puts on PATH.
func TestMain(m *testing.M) {
	cmds := fakes.Commands()
	cmds["synaxi"] = func() { os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
	testscript.Main(m, cmds)
}

// TestScript runs the CLI flows in testdata/script (install, uninstall,
// wrap, status, doctor). See docs/development.md, "Installer tests".
func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("testdata", "script"),
		Setup:               setupHome,
		Cmds:                map[string]func(*testscript.TestScript, bool, []string){"snapshot": cmdSnapshot, "json": cmdJSON, "waitfile": cmdWaitFile, "signal": cmdSignal},
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       *update,
	})
}

// setupHome gives each script a home of its own: $HOME with the XDG
// directories under it (but $XDG_STATE_HOME, where the proxy and wraps
// keep runtime records, in $WORK/state), the built binaries' stand-ins in $WORK/build and a
// synaxi checkout (the marketplace) in $WORK/repo, and $WORK/nocli, a
// directory for PATH that has synaxi but no claude. A proxy the script left
// running is stopped at the end.
func setupHome(e *testscript.Env) error {
	home := filepath.Join(e.WorkDir, "home")
	vars := map[string]string{
		"HOME":               home,
		"XDG_CONFIG_HOME":    filepath.Join(home, ".config"),
		"XDG_DATA_HOME":      filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME":     filepath.Join(e.WorkDir, "state"), // runtime records, outside the snapshots
		"XDG_CACHE_HOME":     filepath.Join(home, ".cache"),
		"SYNAXI_FAKE_RECORD": filepath.Join(e.WorkDir, "record"),
	}
	for k, v := range vars {
		e.Setenv(k, v)
	}
	if err := os.MkdirAll(home, 0o755); err != nil {
		return err
	}
	if err := fakes.BinSource(filepath.Join(e.WorkDir, "build"), setup.Binaries); err != nil {
		return err
	}
	market := filepath.Join(e.WorkDir, "repo", ".claude-plugin")
	if err := os.MkdirAll(market, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(market, "marketplace.json"), []byte(`{"name":"synaxi"}`+"\n"), 0o644); err != nil {
		return err
	}
	// $WORK/nocli has synaxi but no claude, for a PATH without the CLI.
	self, err := exec.LookPath("synaxi")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(e.WorkDir, "nocli"), 0o755); err != nil {
		return err
	}
	if err := os.Symlink(self, filepath.Join(e.WorkDir, "nocli", "synaxi")); err != nil {
		return err
	}
	state := xdg.Dirs{State: filepath.Join(vars["XDG_STATE_HOME"], "synaxi")}
	e.Defer(func() { fakes.StopProxy(state) })
	return nil
}

// cmdSnapshot writes FILE listing every directory and file under $HOME
// (with each file's size and SHA-256), leaving out each -x PREFIX
// (relative to $HOME), so two snapshots compare byte for byte with cmp.
//
//	snapshot [-x PREFIX]... FILE
func cmdSnapshot(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! snapshot")
	}
	var skip []string
	for len(args) > 1 && args[0] == "-x" {
		skip = append(skip, filepath.Clean(args[1]))
		args = args[2:]
	}
	if len(args) != 1 {
		ts.Fatalf("usage: snapshot [-x PREFIX]... FILE")
	}
	home := ts.Getenv("HOME")
	var b strings.Builder
	err := filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(home, p)
		if slices.ContainsFunc(skip, func(s string) bool { return rel == s || strings.HasPrefix(rel, s+string(filepath.Separator)) }) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case rel == ".":
		case d.IsDir():
			fmt.Fprintf(&b, "%s/\n", rel)
		case d.Type().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, "%s %d %x\n", rel, len(data), sha256.Sum256(data))
		default:
			fmt.Fprintf(&b, "%s %v\n", rel, d.Type())
		}
		return nil
	})
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(b.String()), 0o644))
}

// cmdJSON checks the value at a gjson PATH in a JSON FILE against a
// regular expression (strings unquoted, anything else as written); with !,
// that PATH is absent.
//
//	json FILE PATH REGEXP
//	! json FILE PATH
func cmdJSON(ts *testscript.TestScript, neg bool, args []string) {
	if (neg && len(args) != 2) || (!neg && len(args) != 3) {
		ts.Fatalf("usage: json FILE PATH REGEXP | ! json FILE PATH")
	}
	data := ts.ReadFile(args[0])
	if !gjson.Valid(data) {
		ts.Fatalf("%s is not valid JSON", args[0])
	}
	v := gjson.Get(data, args[1])
	if neg {
		if v.Exists() {
			ts.Fatalf("%s: %s is %s, want it absent", args[0], args[1], v.Raw)
		}
		return
	}
	if !v.Exists() {
		ts.Fatalf("%s: no %s", args[0], args[1])
	}
	re, err := regexp.Compile(args[2])
	ts.Check(err)
	if !re.MatchString(v.String()) {
		ts.Fatalf("%s: %s is %q, want a match for %q", args[0], args[1], v.String(), args[2])
	}
}

// cmdWaitFile waits (up to 30 s) until FILE exists.
//
//	waitfile FILE
func cmdWaitFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitfile FILE")
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(ts.MkAbs(args[0])); err == nil {
			return
		}
	}
	ts.Fatalf("%s did not appear in 30s", args[0])
}

// cmdSignal sends SIGNAL (TERM, KILL, HUP, INT) to the fake Claude Code
// session that wrote $SYNAXI_FAKE_RECORD ("claude") or to the wrap that
// launched it ("wrap"). After KILL it waits until the process is gone.
//
//	signal SIGNAL claude|wrap
func cmdSignal(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: signal SIGNAL claude|wrap")
	}
	sigs := map[string]syscall.Signal{"TERM": syscall.SIGTERM, "KILL": syscall.SIGKILL, "HUP": syscall.SIGHUP, "INT": syscall.SIGINT}
	sig, ok := sigs[args[0]]
	if !ok {
		ts.Fatalf("unknown signal %s (one of %v)", args[0], slices.Sorted(maps.Keys(sigs)))
	}
	field := map[string]string{"claude": "pid", "wrap": "ppid"}[args[1]]
	if field == "" {
		ts.Fatalf("signal whom? %q is neither claude nor wrap", args[1])
	}
	pid := recorded(ts, field)
	ts.Check(syscall.Kill(pid, sig))
	if sig != syscall.SIGKILL {
		return
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if gone(pid) {
			return
		}
	}
	ts.Fatalf("pid %d still runs 10s after SIGKILL", pid)
}

// recorded reads one number ("pid" or "ppid") from the session record.
func recorded(ts *testscript.TestScript, field string) int {
	f, err := os.Open(ts.Getenv("SYNAXI_FAKE_RECORD"))
	ts.Check(err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+" "); ok {
			n, err := strconv.Atoi(v)
			ts.Check(err)
			return n
		}
	}
	ts.Fatalf("no %s in the session record", field)
	return 0
}

// gone reports whether pid has exited (a zombie waiting for a parent that
// is not this test counts as gone).
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	_, after, ok := strings.Cut(string(stat), ") ")
	return ok && strings.HasPrefix(after, "Z")
}
