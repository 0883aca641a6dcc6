// Command synaxi-fakeapi serves the scripted fake Anthropic upstream
// (package fakeapi) on a loopback port with the built-in demo agent, for
// manual runs of the real Claude Code client and for benchmarks.
//
//	synaxi-fakeapi -listen 127.0.0.1:8787 [-cache-min 1024] [-quiet]
//
// Point a client at it with ANTHROPIC_BASE_URL=http://127.0.0.1:8787 and any
// ANTHROPIC_API_KEY. The demo agent reads the absolute paths named in the
// task, runs each run: `CMD` once, then summarises. GET /_fakeapi/stats
// returns the cache simulator's totals as JSON; GET /_fakeapi/requests lists
// the requests received (method, path, kind, status, usage, validation error).
// Each request is logged to stderr as one line unless -quiet is given.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/synaxi/synaxi/e2e/fakeapi"
	"github.com/synaxi/synaxi/internal/buildinfo"
)

var version = ""

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("synaxi-fakeapi", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:8787", "loopback address to serve on")
	cacheMin := fs.Int("cache-min", 1024, "minimum cacheable prefix in tokens")
	quiet := fs.Bool("quiet", false, "do not log each request")
	showVersion := fs.Bool("version", false, "print the version and exit")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *showVersion {
		fmt.Fprintln(stdout, buildinfo.Version(version))
		return 0
	}
	if err := checkLoopback(*listen); err != nil {
		fmt.Fprintf(stderr, "synaxi-fakeapi: %v\n", err)
		return 2
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintf(stderr, "synaxi-fakeapi: listen on %s: %v\n", *listen, err)
		return 1
	}
	opts := fakeapi.Options{Agent: fakeapi.DemoAgent(), CacheMinTokens: *cacheMin}
	if !*quiet {
		opts.Observe = func(r *fakeapi.Request) { logRequest(stderr, r) }
	}
	fake := fakeapi.NewHandler(opts)
	if err := Serve(ctx, ln, fake, stdout); err != nil {
		fmt.Fprintf(stderr, "synaxi-fakeapi: %v\n", err)
		return 1
	}
	return 0
}

func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("parse -listen %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("-listen %q is not a loopback address; use 127.0.0.1:PORT", addr)
	}
	return nil
}

// Serve answers on ln until ctx is done.
func Serve(ctx context.Context, ln net.Listener, fake *fakeapi.Server, stdout io.Writer) error {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /_fakeapi/stats", func(w http.ResponseWriter, _ *http.Request) {
		st := fake.CacheStats()
		writeJSON(w, map[string]any{"stats": st, "hit_ratio": st.HitRatio(), "billed_equivalent": st.BilledEquivalent()})
	})
	mux.HandleFunc("GET /_fakeapi/requests", func(w http.ResponseWriter, _ *http.Request) {
		type row struct {
			Method, Path, Kind, Invalid string
			Status                      int
			Usage                       fakeapi.Usage
		}
		var rows []row
		for _, r := range fake.Requests() {
			rows = append(rows, row{r.Method, r.Path, r.Kind, r.Invalid, r.Status, r.Usage})
		}
		writeJSON(w, rows)
	})
	mux.Handle("/", fake)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stdout, "synaxi-fakeapi listening on http://%s\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
		shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(shutCtx); err != nil {
			return fmt.Errorf("shut down: %w", err)
		}
		return nil
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return fmt.Errorf("serve: %w", err)
	}
}

// logRequest writes one line per answered request.
func logRequest(w io.Writer, r *fakeapi.Request) {
	fmt.Fprintf(w, "%s %s %s status=%d in=%d write=%d read=%d out=%d %s\n",
		r.Time.Format(time.TimeOnly), r.Method, r.Path, r.Status, r.Usage.InputTokens,
		r.Usage.CacheCreationInputTokens, r.Usage.CacheReadInputTokens, r.Usage.OutputTokens, r.Invalid)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
