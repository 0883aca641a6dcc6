package reads

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/synaxi/synaxi/internal/visibility"
)

// Remote visibility. A proxy on another machine (a team's, behind a load
// balancer) writes its visibility exports where this hook cannot read them,
// so the hook asks it over HTTP instead, once per pre-read call. The HTTP
// call is not made in this binary: net/http and crypto/tls would cost every
// call their start-up (internal/visibility/remote). The hook runs
// `synaxi visibility` beside its own executable, only when a remote proxy
// is configured. Any failure (no helper, unreachable, slow, refused, not
// found, undecodable) gives no export, which allows the read: the hook
// never denies on an answer it did not get.

// RemoteTimeout bounds the HTTP call; the helper process as a whole, its
// start included, gets twice that.
const RemoteTimeout = 150 * time.Millisecond

// teamTokenHeader is the header synaxi-proxyd's team token travels in; a
// client configured with it in ANTHROPIC_CUSTOM_HEADERS talks to a synaxi
// proxy.
const teamTokenHeader = "X-Synaxi-Token"

// helper is the program beside the hook that makes the HTTP call.
const helper = "synaxi"

// remoteURL is the base URL of a proxy on another machine to ask for
// visibility, or "" when the exports are local files: noreread.visibility_url
// when set; else ANTHROPIC_BASE_URL when it is not loopback and the client
// sends synaxi's team token header (so it is a synaxi proxy, not the
// Anthropic API or another gateway, which must never be asked).
func (s *Store) remoteURL() string {
	if s.Cfg.VisibilityURL != "" {
		return s.Cfg.VisibilityURL
	}
	if loopback(s.BaseURL) {
		return ""
	}
	u, err := url.Parse(strings.TrimSpace(s.BaseURL))
	if err != nil || u.Host == "" || u.Scheme != "http" && u.Scheme != "https" {
		return ""
	}
	if !visibility.HasHeader(visibility.CustomHeaders(s.CustomHeaders), teamTokenHeader) {
		return ""
	}
	return s.BaseURL
}

// remoteVisibility asks the proxy at base for a context's export, with the
// client's custom headers (the team token among them); nil on any failure.
func (s *Store) remoteVisibility(base, session, agent string) *visibility.Export {
	ctx, cancel := context.WithTimeout(context.Background(), 2*RemoteTimeout)
	defer cancel()
	ask := s.AskRemote
	if ask == nil {
		ask = askHelper
	}
	return ask(ctx, RemoteRequest{Base: base, Session: session, Agent: agent, Headers: s.CustomHeaders})
}

// RemoteRequest is one remote visibility question.
type RemoteRequest struct {
	Base, Session, Agent string
	Headers              string // ANTHROPIC_CUSTOM_HEADERS as the client has it
}

// askHelper runs `synaxi visibility -timeout T BASE SESSION [AGENT]` from the
// hook's own directory (where the plugin's binaries are installed together)
// and decodes the export it prints.
func askHelper(ctx context.Context, r RemoteRequest) *visibility.Export {
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	args := []string{"visibility", "-timeout", RemoteTimeout.String(), r.Base, r.Session}
	if r.Agent != "" {
		args = append(args, r.Agent)
	}
	cmd := exec.CommandContext(ctx, filepath.Join(filepath.Dir(exe), helper), args...)
	cmd.Env = append(os.Environ(), "ANTHROPIC_CUSTOM_HEADERS="+r.Headers)
	out, err := cmd.Output()
	if err != nil {
		return nil
	}
	var e visibility.Export
	if json.NewDecoder(bytes.NewReader(out)).Decode(&e) != nil || e.Files == nil {
		return nil
	}
	return &e
}
