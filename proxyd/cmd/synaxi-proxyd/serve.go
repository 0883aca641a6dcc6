package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"strings"
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
	"github.com/synaxi/synaxi/proxyd/internal/server"
	"github.com/synaxi/synaxi/proxyd/internal/visstore"
)

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
	ln = acc.wrap(ln, log)
	replica := cfg.Proxy.Replica
	if replica == "" {
		replica, _ = os.Hostname()
	}
	mx, err := metrics.New(ctx, metrics.Options{Replica: replica, Version: buildinfo.Version(version), OTLPEndpoint: cfg.Proxy.OTLPEndpoint})
	if err != nil {
		return err
	}
	defer lastPush(ctx, mx, log)
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

// lastPush pushes the metrics over OTLP one last time, after the drain.
func lastPush(ctx context.Context, mx *metrics.Metrics, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := mx.Shutdown(ctx); err != nil {
		log.Warn("metrics: last OTLP push", "err", err)
	}
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
