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
	"strings"
	"syscall"
	"time"

	"github.com/synaxi/synaxi/internal/buildinfo"
	"github.com/synaxi/synaxi/internal/config"
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
		return serve(ctx, args, stdout, stderr)
	case "start":
		return start(ctx, args, stdout, stderr)
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

// options are the serve flags; set records which ones were given.
type options struct {
	configPath  string
	listen      string
	logLevel    string
	drain       time.Duration
	showVersion bool
	set         map[string]bool
	upstream    string
	model       string
	port        int
	projectAll  bool
	disable     bool
	countTokens bool
	idleExit    time.Duration
	logConv     bool
	tokenFile   string
	tlsCert     string
	tlsKey      string
	otlp        string
	replica     string
	visStore    string
	takeover    bool
}

// parseServe reads the flags of serve and start. Flag errors are already
// written to stderr when it returns.
func parseServe(name string, args []string, stderr io.Writer) (*options, error) {
	o := &options{set: map[string]bool{}}
	fs := flag.NewFlagSet("synaxi-proxyd "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.configPath, "config", "", "config file (default $XDG_CONFIG_HOME/synaxi/config.toml)")
	fs.StringVar(&o.listen, "listen", "", "listen address host:port (default 127.0.0.1 and proxy.port)")
	fs.StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.DurationVar(&o.drain, "drain", 10*time.Minute, "how long shutdown (SIGTERM, SIGINT, stop) waits for in-flight streams before cutting them")
	fs.BoolVar(&o.showVersion, "version", false, "print the version and exit")
	fs.StringVar(&o.upstream, "upstream", "", "upstream base URL (proxy.upstream)")
	fs.StringVar(&o.model, "upstream-model", "", "rewrite every Messages request's model to this (proxy.upstream_model)")
	fs.IntVar(&o.port, "port", 0, "loopback port (proxy.port)")
	fs.BoolVar(&o.projectAll, "project-all", false, "project every Messages request (proxy.project_all)")
	fs.BoolVar(&o.disable, "disable-projection", false, "never project (proxy.disable_projection)")
	fs.BoolVar(&o.countTokens, "count-tokens", true, "measure with the upstream's count_tokens (proxy.count_tokens)")
	fs.DurationVar(&o.idleExit, "idle-exit", 0, "exit after this long without requests; 0 never (proxy.idle_exit)")
	fs.BoolVar(&o.logConv, "log-conversations", false, "write the JSONL conversation log (proxy.log_conversations)")
	fs.BoolVar(&o.takeover, "takeover", false, "replace a running instance: signal it to drain and serve on its address as soon as it lets go (no request in flight is dropped)")
	fs.StringVar(&o.tokenFile, "token-file", "", "file holding the team token every request must carry in "+server.TokenHeader+"; required beyond loopback (proxy.token_file)")
	fs.StringVar(&o.tlsCert, "tls-cert", "", "PEM certificate: serve HTTPS (proxy.tls_cert)")
	fs.StringVar(&o.tlsKey, "tls-key", "", "PEM private key of --tls-cert (proxy.tls_key)")
	fs.StringVar(&o.otlp, "otlp-endpoint", "", "also push metrics over OTLP/HTTP to this URL (proxy.otlp_endpoint)")
	fs.StringVar(&o.replica, "replica", "", "this replica's name in metric labels; default the host name (proxy.replica)")
	fs.StringVar(&o.visStore, "visibility-store", "", "redis://host:6379/0 holding the no-reread hook's visibility exports, shared by the replicas (proxy.visibility_store)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	fs.Visit(func(f *flag.Flag) { o.set[f.Name] = true })
	return o, nil
}

// apply lays the flags that were given over the loaded configuration.
func (o *options) apply(c *config.Proxy) {
	if o.set["upstream"] {
		c.Upstream = o.upstream
	}
	if o.set["upstream-model"] {
		c.UpstreamModel = o.model
	}
	if o.set["port"] {
		c.Port = o.port
	}
	if o.set["project-all"] {
		c.ProjectAll = o.projectAll
	}
	if o.set["disable-projection"] {
		c.DisableProjection = o.disable
	}
	if o.set["count-tokens"] {
		c.CountTokens = o.countTokens
	}
	if o.set["idle-exit"] {
		c.IdleExit = config.Duration(o.idleExit)
	}
	if o.set["log-conversations"] {
		c.LogConversations = o.logConv
	}
	for flag, v := range map[string]struct {
		to   *string
		from string
	}{
		"token-file": {&c.TokenFile, o.tokenFile}, "tls-cert": {&c.TLSCert, o.tlsCert}, "tls-key": {&c.TLSKey, o.tlsKey},
		"otlp-endpoint": {&c.OTLPEndpoint, o.otlp}, "replica": {&c.Replica, o.replica},
		"visibility-store": {&c.VisibilityStore, o.visStore},
	} {
		if o.set[flag] {
			*v.to = v.from
		}
	}
}

func loadConfig(o *options, dirs xdg.Dirs) (*config.Config, error) {
	path := o.configPath
	if path == "" {
		path = dirs.ConfigFile()
	}
	l, err := config.Load(path, os.Getenv)
	if err != nil {
		return nil, err
	}
	c := l.Config
	o.apply(&c.Proxy)
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("flags: %w", err)
	}
	return &c, nil
}

// newProjector returns the projection engine for gated requests.
func newProjector(cfg *config.Config) gate.Projector {
	return projection.New(projection.FromConfig(cfg.Projection))
}

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseServe("serve", args, stderr)
	if err != nil {
		return 2
	}
	if o.showVersion {
		fmt.Fprintln(stdout, "synaxi-proxyd", buildinfo.Version(version))
		return 0
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		fmt.Fprintf(stderr, "synaxi-proxyd: --log-level: %v\n", err)
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	gcPercent, memLimit := gcpolicy.Apply()
	log.Debug("garbage collector", "gogc_by_synaxi", gcPercent, "gomemlimit_by_synaxi", memLimit)
	dirs := xdg.Resolve()
	cfg, err := loadConfig(o, dirs)
	if err != nil {
		fmt.Fprintf(stderr, "synaxi-proxyd: config: %v\n", err)
		return 2
	}
	up, err := url.Parse(cfg.Proxy.Upstream)
	if err != nil {
		fmt.Fprintf(stderr, "synaxi-proxyd: upstream: %v\n", err)
		return 2
	}
	acc, err := teamAccess(o.listen, &cfg.Proxy)
	if err != nil {
		fmt.Fprintf(stderr, "synaxi-proxyd: %v\n", err)
		return 2
	}
	var place claim
	ln, tookOver, err := place.take(dirs, o, cfg.Proxy.Port, log)
	if err != nil {
		fmt.Fprintf(stderr, "synaxi-proxyd: %v\n", err)
		return 1
	}
	defer place.release()
	if acc.tls != nil {
		ln = tls.NewListener(ln, acc.tls)
	} else if !server.IsLoopback(ln.Addr().String()) {
		log.Warn("serving plain HTTP beyond loopback: the team token and the clients' credentials cross the network in clear unless TLS ends in front (--tls-cert/--tls-key)")
	}
	// Once the listener is closed, the lock and the record go: a
	// replacement may start on the same port while this one drains.
	var info *proxyinfo.Info
	onDrain := func() {
		if info != nil {
			daemon.Unpublish(dirs, info.PID)
		}
		place.release()
		log.Info("stopped accepting; lock released for a replacement")
	}
	replica := cfg.Proxy.Replica
	if replica == "" {
		replica, _ = os.Hostname()
	}
	mx, err := metrics.New(ctx, metrics.Options{Replica: replica, Version: buildinfo.Version(version), OTLPEndpoint: cfg.Proxy.OTLPEndpoint})
	if err != nil {
		ln.Close()
		fmt.Fprintf(stderr, "synaxi-proxyd: %v\n", err)
		return 1
	}
	defer func() {
		// The last OTLP push, after the drain.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := mx.Shutdown(sctx); err != nil {
			log.Warn("metrics: last OTLP push", "err", err)
		}
	}()
	var shared server.VisibilityStore
	if cfg.Proxy.VisibilityStore != "" {
		vctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		vs, err := visstore.Open(vctx, cfg.Proxy.VisibilityStore)
		cancel()
		if err != nil {
			ln.Close()
			fmt.Fprintf(stderr, "synaxi-proxyd: %v\n  fix proxy.visibility_store (--visibility-store) or start the Redis server it names\n", err)
			return 1
		}
		defer vs.Close()
		shared = vs
	}
	var clog *convlog.Log
	if cfg.Proxy.LogConversations {
		clog = convlog.New(convlog.Path(dirs), cfg.Proxy.LogMaxBytes)
		defer clog.Close()
	}
	srv, err := server.New(server.Options{
		Upstream:      up,
		UpstreamModel: cfg.Proxy.UpstreamModel,
		CountTokens:   cfg.Proxy.CountTokens,
		Rule:          gate.Rule{ProjectAll: cfg.Proxy.ProjectAll, Disable: cfg.Proxy.DisableProjection},
		Projector:     newProjector(cfg),
		Dirs:          dirs,
		Logger:        log,
		ConvLog:       clog,
		Version:       buildinfo.Version(version),
		IdleExit:      cfg.Proxy.IdleExit.Std(),
		ProbeTimeout:  cfg.Proxy.ProbeTimeout.Std(),
		DrainTimeout:  o.drain,
		OnDrain:       onDrain,
		Token:         acc.token,
		Metrics:       mx,

		SharedVisibility: shared,
	})
	if err != nil {
		ln.Close()
		fmt.Fprintf(stderr, "synaxi-proxyd: %v\n", err)
		return 1
	}
	addr := ln.Addr().String()
	info = &proxyinfo.Info{
		PID: os.Getpid(), Addr: addr, Port: portOf(addr), Upstream: up.String(),
		Version: buildinfo.Version(version), Started: time.Now().UTC(),
	}
	if err := daemon.Publish(dirs, info); err != nil {
		ln.Close()
		fmt.Fprintf(stderr, "synaxi-proxyd: %v\n", err)
		return 1
	}
	defer daemon.Unpublish(dirs, info.PID)
	if tookOver {
		go place.holdLock(ctx, dirs, info, log)
	}
	log.Info("listening", "addr", addr, "upstream", up.String(), "version", info.Version,
		"project_all", cfg.Proxy.ProjectAll, "disable_projection", cfg.Proxy.DisableProjection,
		"count_tokens", cfg.Proxy.CountTokens, "idle_exit", cfg.Proxy.IdleExit.Std(),
		"team_token", acc.token != "", "tls", acc.tls != nil, "replica", replica, "otlp", cfg.Proxy.OTLPEndpoint)
	if err := srv.Serve(ctx, ln); err != nil {
		log.Error("serve", "err", err)
		return 1
	}
	log.Info("stopped")
	return 0
}

func portOf(addr string) int {
	var p int
	if i := strings.LastIndexByte(addr, ':'); i >= 0 {
		fmt.Sscan(addr[i+1:], &p)
	}
	return p
}

func start(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseServe("start", args, stderr)
	if err != nil {
		return 2
	}
	dirs := xdg.Resolve()
	cfg, err := loadConfig(o, dirs)
	if err != nil {
		fmt.Fprintf(stderr, "synaxi-proxyd: config: %v\n", err)
		return 2
	}
	acc, err := teamAccess(o.listen, &cfg.Proxy)
	if err != nil {
		fmt.Fprintf(stderr, "synaxi-proxyd: %v\n", err)
		return 2
	}
	if acc.token != "" || acc.tls != nil {
		fmt.Fprintln(stderr, "synaxi-proxyd: start runs one user's proxy on loopback; with a team token or TLS run `synaxi-proxyd serve` under systemd or in a container (docs/deploy.md)")
		return 2
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "synaxi-proxyd: find own executable: %v\n", err)
		return 1
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
		fmt.Fprintf(stderr, "synaxi-proxyd: %v\n", err)
		return 1
	}
	if !started {
		fmt.Fprintf(stderr, "synaxi-proxyd: already running (pid %d)\n", info.PID)
	}
	fmt.Fprintln(stdout, info.Addr)
	return 0
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
