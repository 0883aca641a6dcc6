// Command synaxi-proxyd is synaxi's local model-traffic proxy. Claude Code
// reaches it through ANTHROPIC_BASE_URL; it forwards every request to the
// upstream byte for byte, projects the synaxi-worker's requests into a
// bounded, cache-stable context, and records what each request was billed
// against count_tokens' answer for the original.
//
// Usage:
//
//	synaxi-proxyd [serve] [flags]   run in the foreground
//	synaxi-proxyd start [flags]     run detached; prints the address once /health answers
//	                                (--takeover: replace the running instance without dropping a request)
//	synaxi-proxyd stop              stop accepting; streams in flight finish, then it exits
//	synaxi-proxyd status [--json]   show the running instance and its /health
//	synaxi-proxyd replay PATH…      replay transcripts (files or directories) through the projection
//	synaxi-proxyd -version
//
// Flags win over SYNAXI_PROXY_* environment variables, which win over
// $XDG_CONFIG_HOME/synaxi/config.toml, which wins over the defaults.
package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/synaxi/synaxi/internal/buildinfo"
	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/governor"
	"github.com/synaxi/synaxi/internal/proxyinfo"
	"github.com/synaxi/synaxi/internal/xdg"
	"github.com/synaxi/synaxi/proxyd/internal/convlog"
	"github.com/synaxi/synaxi/proxyd/internal/daemon"
	"github.com/synaxi/synaxi/proxyd/internal/gate"
	"github.com/synaxi/synaxi/proxyd/internal/gcpolicy"
	"github.com/synaxi/synaxi/proxyd/internal/metrics"
	"github.com/synaxi/synaxi/proxyd/internal/projection"
	"github.com/synaxi/synaxi/proxyd/internal/replay"
	"github.com/synaxi/synaxi/proxyd/internal/server"
	"github.com/synaxi/synaxi/proxyd/internal/visstore"
)

var version = "" // set with -ldflags "-X main.version=…"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cmd := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return exit(stderr, serve(ctx, args, stdout, stderr))
	case "start":
		return exit(stderr, start(ctx, args, stdout, stderr))
	case "stop":
		return stopCmd(ctx, args, stdout, stderr)
	case "status":
		return status(ctx, args, stdout, stderr)
	case "replay":
		return replay.Main(args, stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, "synaxi-proxyd", buildinfo.Version(version))
		return 0
	case "help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "synaxi-proxyd: unknown command %q\n%s", cmd, usage)
	return 2
}

const usage = `usage:
  synaxi-proxyd [serve] [flags]   run in the foreground
  synaxi-proxyd start [flags]     run detached; prints the address once /health answers
  synaxi-proxyd stop              stop accepting; streams in flight finish, then it exits
  synaxi-proxyd status [--json]   show the running instance and its /health
  synaxi-proxyd replay PATH…      replay transcripts (files or directories) through the projection
  synaxi-proxyd -version
run "synaxi-proxyd serve -h" for the flags
`

// options are the flags of serve and start that are not configuration
// keys; args are the arguments they were parsed from.
type options struct {
	configPath  string
	listen      string
	logLevel    string
	drain       time.Duration
	showVersion bool
	takeover    bool
	args        []string
}

// bindFlags defines the flags of serve and start: the options into o and
// every configuration flag into its key of p. Parsing the arguments into a
// set bound to the loaded configuration lays the flags that were given over
// it, so each flag is named here and nowhere else.
func bindFlags(name string, o *options, p *config.Proxy) *flag.FlagSet {
	fs := flag.NewFlagSet("synaxi-proxyd "+name, flag.ContinueOnError)
	fs.StringVar(&o.configPath, "config", "", "config file (default $XDG_CONFIG_HOME/synaxi/config.toml)")
	fs.StringVar(&o.listen, "listen", "", "listen address host:port (default 127.0.0.1 and proxy.port)")
	fs.StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.DurationVar(&o.drain, "drain", 10*time.Minute, "how long shutdown (SIGTERM, SIGINT, stop) waits for in-flight streams before cutting them")
	fs.BoolVar(&o.showVersion, "version", false, "print the version and exit")
	fs.BoolVar(&o.takeover, "takeover", false, "replace a running instance: signal it to drain and serve on its address as soon as it lets go (no request in flight is dropped)")
	fs.StringVar(&p.Upstream, "upstream", p.Upstream, "upstream base URL (proxy.upstream)")
	fs.StringVar(&p.UpstreamModel, "upstream-model", p.UpstreamModel, "rewrite every Messages request's model to this (proxy.upstream_model)")
	fs.IntVar(&p.Port, "port", p.Port, "loopback port (proxy.port)")
	fs.StringVar(&p.Scope, "scope", p.Scope, "which requests are projected: all, worker or off (proxy.scope)")
	fs.BoolFunc("project-all", "same as --scope all (=false: --scope worker)", scopeAlias(&p.Scope, config.ScopeAll, config.ScopeWorker))
	fs.BoolFunc("disable-projection", "same as --scope off", scopeAlias(&p.Scope, config.ScopeOff, ""))
	fs.BoolVar(&p.CountTokens, "count-tokens", p.CountTokens, "measure with the upstream's count_tokens (proxy.count_tokens)")
	fs.TextVar(&p.IdleExit, "idle-exit", p.IdleExit, "exit after this long without requests; 0 never (proxy.idle_exit)")
	fs.BoolVar(&p.LogConversations, "log-conversations", p.LogConversations, "write the JSONL conversation log (proxy.log_conversations)")
	fs.StringVar(&p.TokenFile, "token-file", p.TokenFile, "file holding the team token every request must carry in "+server.TokenHeader+"; required beyond loopback (proxy.token_file)")
	fs.StringVar(&p.TLSCert, "tls-cert", p.TLSCert, "PEM certificate: serve HTTPS (proxy.tls_cert)")
	fs.StringVar(&p.TLSKey, "tls-key", p.TLSKey, "PEM private key of --tls-cert (proxy.tls_key)")
	fs.StringVar(&p.OTLPEndpoint, "otlp-endpoint", p.OTLPEndpoint, "also push metrics over OTLP/HTTP to this URL (proxy.otlp_endpoint)")
	fs.StringVar(&p.Replica, "replica", p.Replica, "this replica's name in metric labels; default the host name (proxy.replica)")
	fs.StringVar(&p.VisibilityStore, "visibility-store", p.VisibilityStore, "redis://host:6379/0 holding the no-reread hook's visibility exports, shared by the replicas (proxy.visibility_store)")
	return fs
}

// scopeAlias is a boolean flag that sets the scope to yes, or to no when
// false (no change when no is empty).
func scopeAlias(scope *string, yes, no string) func(string) error {
	return func(v string) error {
		b, err := strconv.ParseBool(v)
		switch {
		case err != nil:
			return err
		case b:
			*scope = yes
		case no != "":
			*scope = no
		}
		return nil
	}
}

// parseFlags reads the flags of serve and start, the configuration flags
// against the defaults (so -h shows them); loadConfig lays them over the
// configuration. Flag errors are already written to stderr when it returns.
func parseFlags(name string, args []string, stderr io.Writer) (*options, error) {
	o := &options{args: args}
	defaults := config.Default().Proxy
	fs := bindFlags(name, o, &defaults)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return nil, &usageError{err: err, printed: true}
	}
	if fs.NArg() > 0 {
		return nil, &usageError{err: fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	}
	return o, nil
}

// loadConfig loads the configuration (the file, then SYNAXI_* variables)
// and lays the flags of o over it.
func loadConfig(o *options, dirs xdg.Dirs) (*config.Config, error) {
	path := o.configPath
	if path == "" {
		path = dirs.ConfigFile()
	}
	l, err := config.Load(path, os.Getenv)
	if err != nil {
		return nil, &usageError{err: fmt.Errorf("config: %w", err)}
	}
	c := l.Config
	fs := bindFlags("", &options{}, &c.Proxy)
	fs.SetOutput(io.Discard)
	if err := fs.Parse(o.args); err != nil { // parseFlags has accepted them
		return nil, &usageError{err: err}
	}
	if err := c.Validate(); err != nil {
		return nil, &usageError{err: fmt.Errorf("flags: %w", err)}
	}
	return &c, nil
}

// usageError is a mistake in how synaxi-proxyd was called (a flag, the
// configuration, the team access): run exits 2 for it and 1 for any other
// error. printed: the flag package has already said what was wrong.
type usageError struct {
	err     error
	printed bool
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// exit prints err, if any, and returns the exit status for it.
func exit(stderr io.Writer, err error) int {
	var ue *usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue):
		if !ue.printed {
			fmt.Fprintf(stderr, "synaxi-proxyd: %v\n", err)
		}
		return 2
	}
	fmt.Fprintf(stderr, "synaxi-proxyd: %v\n", err)
	return 1
}

// newProjector returns the projection engine for gated requests.
func newProjector(cfg *config.Config) gate.Projector {
	return projection.New(projection.FromConfig(cfg.Projection))
}

// serve runs the proxy in the foreground until ctx is done, then drains.
// Everything it opens is closed by a defer, in reverse order, whichever way
// it returns.
func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags("serve", args, stderr)
	if err != nil {
		return err
	}
	if o.showVersion {
		fmt.Fprintln(stdout, "synaxi-proxyd", buildinfo.Version(version))
		return nil
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		return &usageError{err: fmt.Errorf("--log-level: %w", err)}
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	gcPercent, memLimit := gcpolicy.Apply()
	log.Debug("garbage collector", "gogc_by_synaxi", gcPercent, "gomemlimit_by_synaxi", memLimit)
	dirs := xdg.Resolve()
	cfg, err := loadConfig(o, dirs)
	if err != nil {
		return err
	}
	up, err := url.Parse(cfg.Proxy.Upstream) // Validate has checked it
	if err != nil {
		return &usageError{err: fmt.Errorf("upstream: %w", err)}
	}
	acc, err := teamAccess(o.listen, &cfg.Proxy)
	if err != nil {
		return &usageError{err: err}
	}
	var place claim
	ln, tookOver, err := place.take(dirs, o, cfg.Proxy.Port, log)
	if err != nil {
		return err
	}
	defer place.release()
	defer ln.Close() // Serve closes it too; a second Close does nothing
	if acc.tls != nil {
		ln = tls.NewListener(ln, acc.tls)
	} else if !server.IsLoopback(ln.Addr().String()) {
		log.Warn("serving plain HTTP beyond loopback: the team token and the clients' credentials cross the network in clear unless TLS ends in front (--tls-cert/--tls-key)")
	}
	replica := cfg.Proxy.Replica
	if replica == "" {
		replica, _ = os.Hostname()
	}
	mx, err := metrics.New(ctx, metrics.Options{Replica: replica, Version: buildinfo.Version(version), OTLPEndpoint: cfg.Proxy.OTLPEndpoint})
	if err != nil {
		return err
	}
	defer func() {
		// The last OTLP push, after the drain.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := mx.Shutdown(sctx); err != nil {
			log.Warn("metrics: last OTLP push", "err", err)
		}
	}()
	var shared server.VisibilityStore // nil: none (never a nil *visstore.Store)
	vs, err := openVisibility(ctx, cfg.Proxy.VisibilityStore)
	if err != nil {
		return err
	}
	if vs != nil {
		defer vs.Close()
		shared = vs
	}
	var clog *convlog.Log
	if cfg.Proxy.LogConversations {
		clog = convlog.New(convlog.Path(dirs), cfg.Proxy.LogMaxBytes)
		defer clog.Close()
	}
	addr := ln.Addr().String()
	info := &proxyinfo.Info{
		PID: os.Getpid(), Addr: addr, Port: portOf(addr), Upstream: up.Redacted(),
		Version: buildinfo.Version(version), Started: time.Now().UTC(),
	}
	srv, err := server.New(server.Options{
		Upstream:      up,
		UpstreamModel: cfg.Proxy.UpstreamModel,
		CountTokens:   cfg.Proxy.CountTokens,
		Rule:          gate.Rule{Scope: cfg.Proxy.Scope},
		Projector:     newProjector(cfg),
		Dirs:          dirs,
		Logger:        log,
		ConvLog:       clog,
		Version:       info.Version,
		ConfigHash:    cfg.ProxyFingerprint(),
		IdleExit:      cfg.Proxy.IdleExit.Std(),
		ProbeTimeout:  cfg.Proxy.ProbeTimeout.Std(),
		DrainTimeout:  o.drain,
		// Once the listener is closed, the lock and the record go: a
		// replacement may start on the same port while this one drains.
		OnDrain: func() {
			daemon.Unpublish(dirs, info.PID)
			place.release()
			log.Info("stopped accepting; lock released for a replacement")
		},
		Token:   acc.token,
		Metrics: mx,

		SharedVisibility: shared,
		Governor:         governor.Mode(cfg.Governor.Mode),
	})
	if err != nil {
		return err
	}
	if err := daemon.Publish(dirs, info); err != nil {
		return err
	}
	defer daemon.Unpublish(dirs, info.PID)
	if tookOver {
		go place.holdLock(ctx, dirs, info, log)
	}
	log.Info("listening", "addr", addr, "upstream", info.Upstream, "version", info.Version, "config", cfg.ProxyFingerprint(),
		"scope", cfg.Proxy.Scope,
		"count_tokens", cfg.Proxy.CountTokens, "idle_exit", cfg.Proxy.IdleExit.Std(),
		"team_token", acc.token != "", "tls", acc.tls != nil, "replica", replica, "otlp", cfg.Proxy.OTLPEndpoint)
	if err := srv.Serve(ctx, ln); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	log.Info("stopped")
	return nil
}

// openVisibility connects to the shared visibility store, if one is
// configured (nil: none).
func openVisibility(ctx context.Context, store string) (*visstore.Store, error) {
	if store == "" {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	vs, err := visstore.Open(ctx, store)
	if err != nil {
		return nil, fmt.Errorf("%w\n  fix proxy.visibility_store (--visibility-store) or start the Redis server it names", err)
	}
	return vs, nil
}

func portOf(addr string) int {
	var p int
	if i := strings.LastIndexByte(addr, ':'); i >= 0 {
		fmt.Sscan(addr[i+1:], &p)
	}
	return p
}

// start runs serve detached and prints its address once /health answers.
func start(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags("start", args, stderr)
	if err != nil {
		return err
	}
	dirs := xdg.Resolve()
	cfg, err := loadConfig(o, dirs)
	if err != nil {
		return err
	}
	acc, err := teamAccess(o.listen, &cfg.Proxy)
	if err != nil {
		return &usageError{err: err}
	}
	if acc.token != "" || acc.tls != nil {
		return &usageError{err: errors.New("start runs one user's proxy on loopback; with a team token or TLS run `synaxi-proxyd serve` under systemd or in a container (docs/deploy.md)")}
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find own executable: %w", err)
	}
	var info *proxyinfo.Info
	started := true
	if o.takeover {
		// A replacement starts whether or not an instance runs.
		info, err = daemon.Launch(ctx, dirs, exe, append([]string{"serve"}, args...), os.Environ(), 15*time.Second)
	} else {
		info, started, err = daemon.Start(ctx, dirs, exe, append([]string{"serve"}, args...), os.Environ(), 15*time.Second)
	}
	if err != nil {
		return err
	}
	if !started {
		fmt.Fprintf(stderr, "synaxi-proxyd: already running (pid %d)\n", info.PID)
	}
	fmt.Fprintln(stdout, info.Addr)
	return nil
}

func stopCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("synaxi-proxyd stop", flag.ContinueOnError)
	fs.SetOutput(stderr)
	wait := fs.Duration("wait", 30*time.Second, "how long to wait for the instance to stop accepting (its streams in flight finish after)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	info, err := daemon.Stop(ctx, xdg.Resolve(), *wait)
	switch {
	case errors.Is(err, daemon.ErrNotRunning):
		fmt.Fprintln(stdout, "not running")
		return 0
	case err != nil:
		fmt.Fprintf(stderr, "synaxi-proxyd: stop: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "stopped pid %d (%s); requests in flight finish before it exits\n", info.PID, info.Addr)
	return 0
}

func status(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("synaxi-proxyd status", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the record and /health as JSON")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	info, err := daemon.Running(xdg.Resolve())
	if err != nil {
		if *asJSON {
			fmt.Fprintln(stdout, `{"running":false}`)
		} else {
			fmt.Fprintln(stdout, "not running")
		}
		return 3
	}
	health, herr := daemon.Health(ctx, info.Addr)
	if *asJSON {
		out := map[string]any{"running": herr == nil, "info": info}
		if herr == nil {
			out["health"] = json.RawMessage(health)
		} else {
			out["error"] = herr.Error()
		}
		b, _ := json.Marshal(out)
		fmt.Fprintln(stdout, string(b))
	} else {
		fmt.Fprintf(stdout, "running: pid %d on %s → %s (version %s, since %s)\n",
			info.PID, info.Addr, info.Upstream, info.Version, info.Started.Format(time.RFC3339))
		if herr != nil {
			fmt.Fprintf(stdout, "health: %v\n", herr)
		} else {
			fmt.Fprintf(stdout, "health: %s", health)
		}
	}
	if herr != nil {
		return 1
	}
	return 0
}
