package doctor

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/synaxi/synaxi/installer/internal/proxyctl"
)

// tokenHeader is the team token's header (synaxi-proxyd's server.TokenHeader).
const tokenHeader = "X-Synaxi-Token"

// RemoteEnv is what `synaxi doctor --proxy URL` looks at: a synaxi-proxyd
// that need not run on this machine.
type RemoteEnv struct {
	URL       string // the proxy's base URL, as ANTHROPIC_BASE_URL would name it
	TokenFile string // --token-file; "" takes the token from ANTHROPIC_CUSTOM_HEADERS
	Getenv    func(string) string
	Client    *http.Client // nil: a client with a 5 s timeout
}

// Remote checks a proxy over HTTP: it answers (/livez), it asks for the
// team token and takes ours (/health), its upstream is reachable (/readyz),
// and it serves metrics (/metrics). It prints each check with a fix and
// returns how many failed.
func Remote(ctx context.Context, w io.Writer, e RemoteEnv) int {
	return printChecks(w, remoteChecks(ctx, e))
}

func remoteChecks(ctx context.Context, e RemoteEnv) []Check {
	u, err := url.Parse(strings.TrimSuffix(e.URL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return []Check{fails("proxy URL", fmt.Sprintf("%q is not an http:// or https:// URL with a host", e.URL),
			"pass the proxy's base URL, e.g. --proxy https://synaxi.internal:8787")}
	}
	c := e.Client
	if c == nil {
		c = &http.Client{Timeout: 5 * time.Second}
	}
	token, tokenFrom, tokErr := remoteToken(e)
	get := func(path string, withToken bool) (int, string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String()+path, nil)
		if err != nil {
			return 0, "", err
		}
		if withToken && token != "" {
			req.Header.Set(tokenHeader, token)
		}
		resp, err := c.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return resp.StatusCode, string(b), nil
	}

	var out []Check
	status, _, err := get("/livez", false)
	if err != nil || status != http.StatusOK {
		detail := fmt.Sprintf("GET %s/livez: status %d", u, status)
		if err != nil {
			detail = fmt.Sprintf("GET %s/livez: %v", u, err)
		}
		return append(out, fails("proxy answers", detail,
			"check the URL, that synaxi-proxyd runs there (systemctl status synaxi-proxyd) and, for https, that this machine trusts its certificate"))
	}
	out = append(out, pass("proxy answers", u.String()+"/livez"))

	var auth Check
	status, _, err = get("/health", false)
	switch {
	case err != nil:
		auth = fails("team token", fmt.Sprintf("GET /health: %v", err))
	case status == http.StatusOK && isLoopbackHost(u.Hostname()):
		auth = pass("team token", "the proxy asks for no team token")
	case status == http.StatusOK:
		auth = warns("team token", "the proxy asks for no team token",
			"beyond loopback, run the proxy with --token-file (docs/deploy.md); anyone who reaches it can use it as a relay")
	case status != http.StatusUnauthorized:
		auth = fails("team token", fmt.Sprintf("GET /health without a token: status %d", status))
	case tokErr != nil:
		auth = fails("team token", "the proxy asks for a team token; "+tokErr.Error(),
			"pass --token-file FILE, or set ANTHROPIC_CUSTOM_HEADERS=\"x-synaxi-token: <token>\" as Claude Code will send it")
	default:
		if status, _, err = get("/health", true); err == nil && status == http.StatusOK {
			auth = pass("team token", "required, and the token from "+tokenFrom+" is accepted")
		} else {
			auth = fails("team token", fmt.Sprintf("the token from %s is refused (status %d%s)", tokenFrom, status, errText(err)),
				"ask whoever runs the proxy for the current token")
		}
	}
	out = append(out, auth)
	if !auth.OK() && !auth.Warn {
		return out
	}

	const readyName = "upstream reachable"
	status, body, err := get("/readyz", true)
	switch {
	case err != nil:
		out = append(out, fails(readyName, fmt.Sprintf("GET /readyz: %v", err)))
	case status == http.StatusOK:
		out = append(out, pass(readyName, "/readyz ok"))
	default:
		out = append(out, fails(readyName, fmt.Sprintf("/readyz %d: %s", status, strings.TrimSpace(body)),
			"the proxy cannot reach its upstream (or is draining): check its --upstream and the network from its host"))
	}

	if status, body, err = get("/health", true); err == nil && status == http.StatusOK {
		out = append(out, remoteCalls(body))
	}

	const mxName = "metrics"
	status, body, err = get("/metrics", true)
	switch {
	case err != nil:
		return append(out, fails(mxName, fmt.Sprintf("GET /metrics: %v", err)))
	case status != http.StatusOK:
		return append(out, fails(mxName, fmt.Sprintf("GET /metrics: status %d", status)))
	case !strings.Contains(body, "synaxi_proxy_requests_total"):
		return append(out, fails(mxName, "/metrics answers without synaxi_proxy_requests_total: not a synaxi-proxyd, or an older one", "upgrade the proxy"))
	}
	return append(out, pass(mxName, "/metrics serves synaxi_proxy_requests_total"))
}

// remoteToken finds the team token: --token-file, else the x-synaxi-token
// line of ANTHROPIC_CUSTOM_HEADERS (one "Name: value" per line), which is
// how Claude Code sends it.
func remoteToken(e RemoteEnv) (token, from string, err error) {
	if e.TokenFile != "" {
		b, err := os.ReadFile(e.TokenFile)
		if err != nil {
			return "", "", fmt.Errorf("read the token: %w", err)
		}
		return strings.TrimSpace(string(b)), e.TokenFile, nil
	}
	if e.Getenv != nil {
		for line := range strings.SplitSeq(e.Getenv("ANTHROPIC_CUSTOM_HEADERS"), "\n") {
			name, value, ok := strings.Cut(line, ":")
			if ok && strings.EqualFold(strings.TrimSpace(name), tokenHeader) {
				return strings.TrimSpace(value), "ANTHROPIC_CUSTOM_HEADERS", nil
			}
		}
	}
	return "", "", fmt.Errorf("no token given (--token-file, or %s in ANTHROPIC_CUSTOM_HEADERS)", strings.ToLower(tokenHeader))
}

func isLoopbackHost(h string) bool {
	return h == "localhost" || h == "::1" || strings.HasPrefix(h, "127.")
}

// remoteCalls checks a remote proxy's /health body: its calls to the
// upstream it really uses must not be failing now.
func remoteCalls(body string) Check {
	const name = "upstream calls"
	var h proxyctl.Health
	if err := json.Unmarshal([]byte(body), &h); err != nil {
		return fails(name, "/health does not decode: "+err.Error())
	}
	if h.UpstreamCalls.WindowSeconds == 0 {
		return warns(name, "the proxy does not report its upstream calls (a synaxi-proxyd before they were)", "upgrade the proxy")
	}
	if why, fix := upstreamFailing(&h); why != "" {
		return fails(name, why, fix)
	}
	return pass(name, fmt.Sprintf("upstream %s: no call failing in the last %d minutes without an answer since", h.Upstream, h.UpstreamCalls.WindowSeconds/60))
}
