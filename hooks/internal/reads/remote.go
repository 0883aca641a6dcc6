package reads

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/synaxi/synaxi/internal/visibility"
)

// Remote visibility. A proxy on another machine (a team's, behind a load
// balancer) writes its visibility exports where this hook cannot read them,
// so the hook asks it over HTTP instead, once per pre-read call, within
// RemoteTimeout. Any failure (unreachable, slow, refused, not found,
// undecodable) gives no export, which allows the read: the hook never
// denies on an answer it did not get.

// RemoteTimeout bounds the whole remote visibility call.
const RemoteTimeout = 150 * time.Millisecond

// VisibilityPath is where synaxi-proxyd answers a context's export
// (proxyd/internal/server.VisibilityPath; the hooks module does not import
// the proxy's).
const VisibilityPath = "/synaxi/v1/visibility"

// teamTokenHeader is the header synaxi-proxyd's team token travels in; a
// client configured with it in ANTHROPIC_CUSTOM_HEADERS talks to a synaxi
// proxy.
const teamTokenHeader = "X-Synaxi-Token"

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
	if customHeaders(s.CustomHeaders).Get(teamTokenHeader) == "" {
		return ""
	}
	return s.BaseURL
}

// customHeaders parses ANTHROPIC_CUSTOM_HEADERS: one "Name: value" per
// line, as Claude Code reads it; lines without a colon are skipped.
func customHeaders(v string) http.Header {
	h := http.Header{}
	for _, line := range strings.Split(v, "\n") {
		name, value, ok := strings.Cut(line, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			continue
		}
		h.Add(name, strings.TrimSpace(value))
	}
	return h
}

// remoteVisibility asks the proxy at base for a context's export, sending
// the client's custom headers (the team token among them); nil on any
// failure.
func (s *Store) remoteVisibility(base, session, agent string) *visibility.Export {
	ctx, cancel := context.WithTimeout(context.Background(), RemoteTimeout)
	defer cancel()
	q := url.Values{"session": {session}}
	if agent != "" {
		q.Set("agent", agent)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(base, "/")+VisibilityPath+"?"+q.Encode(), nil)
	if err != nil {
		return nil
	}
	for k, v := range customHeaders(s.CustomHeaders) {
		req.Header[k] = v
	}
	client := s.HTTPClient
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil
	}
	var e visibility.Export
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&e); err != nil || e.Files == nil {
		return nil
	}
	return &e
}
