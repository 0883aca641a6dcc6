package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/xdg"
	"github.com/synaxi/synaxi/proxyd/internal/server"
)

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
