package main

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/proxyd/internal/server"
)

// minTokenLen is the shortest team token accepted.
const minTokenLen = 16

// access is who may use the proxy and how they reach it.
type access struct {
	token string      // "" : no token
	tls   *tls.Config // nil: plain HTTP
}

// teamAccess reads the team token and the TLS pair, and refuses a listen
// address beyond loopback without a token: the proxy would be a relay to
// the upstream for anyone who can reach it.
func teamAccess(listen string, p *config.Proxy) (*access, error) {
	a := &access{}
	if p.TokenFile != "" {
		b, err := os.ReadFile(p.TokenFile)
		if err != nil {
			return nil, fmt.Errorf("team token: %w (proxy.token_file / --token-file)", err)
		}
		a.token = strings.TrimSpace(string(b))
		switch {
		case len(a.token) < minTokenLen:
			return nil, fmt.Errorf("team token in %s is shorter than %d characters; make one with `openssl rand -hex 32 > %s`", p.TokenFile, minTokenLen, p.TokenFile)
		case strings.ContainsAny(a.token, "\r\n\t "):
			return nil, fmt.Errorf("team token in %s holds whitespace; it is sent as one header value (make one with `openssl rand -hex 32`)", p.TokenFile)
		}
	}
	if p.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(p.TLSCert, p.TLSKey)
		if err != nil {
			return nil, fmt.Errorf("TLS: %w (proxy.tls_cert and proxy.tls_key / --tls-cert and --tls-key must name a PEM certificate and its key)", err)
		}
		a.tls = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	if listen != "" && !server.IsLoopback(listen) && a.token == "" {
		return nil, fmt.Errorf("refusing to listen on %s: beyond loopback the proxy needs a team token, or anyone who can reach it uses it as a relay to the upstream.\n"+
			"  fix: openssl rand -hex 32 > token && chmod 600 token, then --token-file token (proxy.token_file);\n"+
			"  clients send it with ANTHROPIC_CUSTOM_HEADERS=\"%s: <token>\"; add --tls-cert/--tls-key unless TLS ends at a load balancer in front.\n"+
			"  Or listen on 127.0.0.1:PORT", listen, strings.ToLower(server.TokenHeader))
	}
	return a, nil
}

// wrap serves TLS on ln when a certificate is configured, and warns when
// plain HTTP is served beyond loopback.
func (a *access) wrap(ln net.Listener, log *slog.Logger) net.Listener {
	if a.tls != nil {
		return tls.NewListener(ln, a.tls)
	}
	if !server.IsLoopback(ln.Addr().String()) {
		log.Warn("serving plain HTTP beyond loopback: the team token and the clients' credentials cross the network in clear unless TLS ends in front (--tls-cert/--tls-key)")
	}
	return ln
}
