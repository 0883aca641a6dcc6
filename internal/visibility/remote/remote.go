// Package remote asks a synaxi-proxyd on another machine (a team's, behind a
// load balancer) for a context's visibility export, which it writes where
// the no-reread hook cannot read it.
//
// It is the one part of the no-reread guard that speaks HTTP, and it stays
// out of the hook binary: net/http and crypto/tls would cost every hook call
// their start-up, remote or not. The hook runs it as `synaxi visibility`
// (installer/cmd/synaxi), beside its own executable, only when a remote
// proxy is configured. Any failure gives no export, which allows the read:
// the hook never denies on an answer it did not get.
package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/synaxi/synaxi/internal/visibility"
)

// Path is where synaxi-proxyd answers a context's export
// (proxyd/internal/server.VisibilityPath).
const Path = "/synaxi/v1/visibility"

// DefaultTimeout bounds a call when the caller names no bound.
const DefaultTimeout = 150 * time.Millisecond

// maxExport bounds the answer read.
const maxExport = 16 << 20

// Get asks the proxy at base for the export of session's context agent (""
// for the main one), sending headers (the client's custom headers, the team
// token among them). client nil is http.DefaultClient; ctx bounds the call.
func Get(ctx context.Context, client *http.Client, base, session, agent string, headers []visibility.Header) (*visibility.Export, error) {
	q := url.Values{"session": {session}}
	if agent != "" {
		q.Set("agent", agent)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(base, "/")+Path+"?"+q.Encode(), nil)
	if err != nil {
		return nil, fmt.Errorf("visibility request: %w", err)
	}
	for _, h := range headers {
		req.Header.Add(h.Name, h.Value)
	}
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("ask %s for visibility: %w", base, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("ask %s for visibility: %s", base, resp.Status)
	}
	var e visibility.Export
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxExport)).Decode(&e); err != nil {
		return nil, fmt.Errorf("visibility from %s: %w", base, err)
	}
	if e.Files == nil {
		return nil, fmt.Errorf("visibility from %s: no files", base)
	}
	return &e, nil
}
