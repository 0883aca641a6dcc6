package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/e2e"
	"github.com/synaxi/synaxi/e2e/claudecli"
	"github.com/synaxi/synaxi/e2e/fakeapi"
	"github.com/synaxi/synaxi/internal/ledger"
	"github.com/synaxi/synaxi/internal/statefile"
	"github.com/synaxi/synaxi/internal/xdg"
)

var (
	proxydOnce sync.Once
	proxydBin  string
	proxydErr  error
)

// buildProxyd builds synaxi-proxyd once per test process.
func buildProxyd(t *testing.T) string {
	t.Helper()
	proxydOnce.Do(func() {
		dir, err := os.MkdirTemp("", "synaxi-proxyd-e2e")
		if err != nil {
			proxydErr = err
			return
		}
		proxydBin = filepath.Join(dir, "synaxi-proxyd")
		cmd := exec.Command("go", "build", "-o", proxydBin, "./proxyd/cmd/synaxi-proxyd")
		cmd.Dir = claudecli.RepoRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			proxydErr = err
			proxydBin = string(out)
		}
	})
	require.NoError(t, proxydErr, proxydBin)
	return proxydBin
}

// runningProxy is synaxi-proxyd started as a subprocess in an Env's
// directories.
type runningProxy struct {
	URL  string
	cmd  *exec.Cmd
	logs *bytes.Buffer
}

func startProxyd(t *testing.T, e *claudecli.Env, upstream string, extra ...string) *runningProxy {
	t.Helper()
	return startProxydIn(t, e.Environ(), e.StateDir(), upstream, extra...)
}

// startProxydIn starts synaxi-proxyd with environment env whose synaxi
// state directory is stateDir.
func startProxydIn(t *testing.T, env []string, stateDir, upstream string, extra ...string) *runningProxy {
	t.Helper()
	bin := buildProxyd(t)
	args := append([]string{"serve", "--listen", "127.0.0.1:0", "--upstream", upstream, "--log-level", "debug"}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	logs := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	require.NoError(t, cmd.Start())
	p := &runningProxy{cmd: cmd, logs: logs}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("synaxi-proxyd log:\n%s", logs.String())
		}
	})
	infoPath := filepath.Join(stateDir, "proxyd", "proxyd.json")
	require.Eventually(t, func() bool {
		var info struct {
			PID  int
			Addr string
		}
		if statefile.ReadJSON(infoPath, &info) != nil || info.PID != cmd.Process.Pid {
			return false
		}
		p.URL = "http://" + info.Addr
		resp, err := http.Get(p.URL + "/health")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	}, 15*time.Second, 20*time.Millisecond, "synaxi-proxyd did not come up")
	return p
}

type proxyHealth struct {
	Requests, Messages, Gated, Projected, FailOpens, ProbeFailures, LedgerErrors int64
}

func (p *runningProxy) health(t *testing.T) proxyHealth {
	t.Helper()
	resp, err := http.Get(p.URL + "/health")
	require.NoError(t, err)
	defer resp.Body.Close()
	var raw map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&raw))
	n := func(k string) int64 { f, _ := raw[k].(float64); return int64(f) }
	return proxyHealth{n("requests"), n("messages"), n("gated"), n("projected"), n("fail_opens"), n("probe_failures"), n("ledger_errors")}
}

func readLedger(t *testing.T, e *claudecli.Env) []ledger.Row {
	t.Helper()
	return readLedgerIn(t, e.StateDir())
}

func readLedgerIn(t *testing.T, stateDir string) []ledger.Row {
	t.Helper()
	rows, err := ledger.Rows(xdg.Dirs{State: stateDir})
	require.NoError(t, err)
	return rows
}

// passThroughHeaders are the client headers that must reach the upstream
// exactly as Claude Code sent them.
var passThroughHeaders = []string{
	"Authorization", "X-Api-Key", "Anthropic-Beta", "Anthropic-Version", "X-App", "User-Agent",
	"X-Claude-Code-Session-Id", "X-Claude-Code-Agent-Id", "Content-Type", "Accept-Encoding",
}

// TestProxyRealClientPassThrough: Claude Code → tap → synaxi-proxyd → fake
// upstream. Every request the client sends reaches the upstream with the
// same method, path, query, headers and body bytes; the streamed answer
// reaches the client; with the worker scope nothing else is gated, so
// nothing is measured.
func TestProxyRealClientPassThrough(t *testing.T) {
	fake := fakeapi.New(fakeapi.Options{Agent: fakeapi.DemoAgent()})
	t.Cleanup(fake.Close)
	e := claudecli.NewEnv(t, "")
	p := startProxyd(t, e, fake.URL(), "--scope", "worker")
	tp := e2e.NewTap(t, p.URL)
	e.BaseURL = tp.URL

	// Non-ASCII file content travels in tool results through the proxy.
	file := filepath.Join(e.Work, "greek.txt")
	require.NoError(t, os.WriteFile(file, []byte("σύναξη — first line\n"+strings.Repeat("λόγος\n", 50)), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := e.Run(ctx, "-p", "Read "+file+" and report its first line.", "--permission-mode", "bypassPermissions")
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, "stdout:\n%s\nstderr:\n%s", res.Stdout, res.Stderr)
	assert.Contains(t, res.Stdout, "σύναξη — first line", "the streamed answer reached the client")

	sent := tp.Requests()
	got := fake.Requests()
	require.NotEmpty(t, sent)
	require.Len(t, got, len(sent), "every request reached the upstream, and nothing else did")
	streamed := 0
	for _, s := range sent {
		var match *fakeapi.Request
		for _, g := range got {
			if g.Method == s.Method && g.Path == s.Path && g.RawQuery == s.RawQuery && bytes.Equal(g.Body, s.Body) {
				match = g
				break
			}
		}
		require.NotNil(t, match, "%s %s?%s (%d bytes) did not arrive byte-identical", s.Method, s.Path, s.RawQuery, len(s.Body))
		for _, h := range passThroughHeaders {
			assert.Equal(t, s.Header.Values(h), match.Header.Values(h), "%s on %s", h, s.Path)
		}
		assert.Empty(t, match.Invalid)
		if match.Kind == "messages" && strings.Contains(string(s.Body), `"stream":true`) {
			streamed++
		}
	}
	var paths []string
	for _, s := range sent {
		paths = append(paths, fmt.Sprintf("%s %s?%s (%d B)", s.Method, s.Path, s.RawQuery, len(s.Body)))
	}
	t.Logf("%d requests compared byte for byte: %s", len(sent), strings.Join(paths, "; "))
	assert.Positive(t, streamed, "the client streamed at least one request")
	assert.Empty(t, readLedger(t, e), "nothing was gated")
	h := p.health(t)
	assert.Equal(t, int64(len(sent)), h.Requests)
	assert.Equal(t, int64(0), h.Gated)
	assert.Equal(t, int64(0), h.FailOpens)
}

// TestProxyRealClientWorkerMeasured: the synaxi-worker (plugin installed,
// run as the main agent) goes through the proxy; its requests are gated and
// each produces a ledger row with the count_tokens counterfactual and the
// usage the upstream billed, and /health counts them.
func TestProxyRealClientWorkerMeasured(t *testing.T) {
	fake := fakeapi.New(fakeapi.Options{Agent: fakeapi.DemoAgent()})
	t.Cleanup(fake.Close)
	e := claudecli.NewEnv(t, "")
	e.InstallPlugin(t)
	p := startProxyd(t, e, fake.URL())
	e.BaseURL = p.URL

	file := filepath.Join(e.Work, "notes.txt")
	require.NoError(t, os.WriteFile(file, []byte(strings.Repeat("a line of notes for the worker\n", 200)), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	res, err := e.Run(ctx, "-p", "Read "+file+" and report its first line. run: `wc -l "+file+"`",
		"--agent", "synaxi:synaxi-worker", "--permission-mode", "bypassPermissions")
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, "stdout:\n%s\nstderr:\n%s", res.Stdout, res.Stderr)
	assert.Contains(t, res.Stdout, "a line of notes for the worker", "the worker saw the file through the proxy")

	// The projection may replace the worker's system prompt, so gated
	// requests are recognised by their count_tokens probes, which carry the
	// original body with the sentinel: one of the whole body, and one of
	// the body cut back to the request before (the same number of messages
	// as that one's), so each gated request adds one distinct length.
	var messages int
	lengths := map[int]bool{}
	for _, r := range fake.Requests() {
		assert.Empty(t, r.Invalid, "%s %s", r.Kind, r.Path)
		switch {
		case r.Kind == "count_tokens" && strings.Contains(string(r.Body), "SYNAXI-PROJECTION-WORKER"):
			var b struct{ Messages []json.RawMessage }
			require.NoError(t, json.Unmarshal(r.Body, &b))
			lengths[len(b.Messages)] = true
		case r.Kind == "messages":
			messages++
		}
	}
	workerCalls := len(lengths)
	require.GreaterOrEqual(t, workerCalls, 2, "the worker looped: tool calls, then the answer")
	assert.GreaterOrEqual(t, messages, workerCalls)

	var rows []ledger.Row
	gatedRows := func() []ledger.Row {
		var out []ledger.Row
		for _, r := range readLedger(t, e) {
			if r.Passed == "" { // a side request's row, if the client sent one
				out = append(out, r)
			}
		}
		return out
	}
	require.Eventually(t, func() bool { rows = gatedRows(); return len(rows) >= workerCalls }, 10*time.Second, 50*time.Millisecond)
	require.Len(t, rows, workerCalls, "one ledger row per gated request")
	for _, r := range rows {
		assert.Equal(t, 200, r.Status)
		assert.False(t, r.FailOpen, r.FailOpenReason)
		require.NotNil(t, r.Counterfactual, "probe: %s", r.CounterfactualNull)
		assert.Positive(t, *r.Counterfactual)
		assert.Positive(t, r.Usage.BilledInput())
		assert.Positive(t, r.Usage.Output)
		assert.NotEmpty(t, r.Session)
		assert.True(t, r.Projected)
		require.NotNil(t, r.Projection)
	}
	for _, r := range rows {
		t.Logf("row %s: counterfactual %d, billed input %d (cache write %d, read %d), output %d, served %d→%d bytes",
			r.ID, *r.Counterfactual, r.Usage.BilledInput(), r.Usage.CacheWrite5m+r.Usage.CacheWrite1h, r.Usage.CacheRead,
			r.Usage.Output, r.Projection.OriginalBytes, r.Projection.ServedBytes)
	}
	h := p.health(t)
	assert.Equal(t, int64(workerCalls), h.Gated)
	assert.Equal(t, int64(workerCalls), h.Projected)
	assert.Equal(t, int64(0), h.ProbeFailures)
	assert.Equal(t, int64(0), h.LedgerErrors)
	assert.Equal(t, int64(0), h.FailOpens)
	sum, err := ledger.ReadSummary(xdg.Dirs{State: e.StateDir()}, rows[0].Session)
	require.NoError(t, err)
	assert.Equal(t, int64(workerCalls), sum.Measured)
}

// TestProxyFaultsAgainstFakeAPI drives synaxi-proxyd (the built binary)
// straight over HTTP against fakeapi's fault injection: every fault reaches
// the client as the upstream sent it, and every gated request leaves its
// ledger row.
func TestProxyFaultsAgainstFakeAPI(t *testing.T) {
	caseOf := func(name string) func(r *fakeapi.Request) bool {
		return func(r *fakeapi.Request) bool { return r.Header.Get("X-Test-Case") == name }
	}
	faults := fakeapi.NewFaults(
		fakeapi.Fault{Kind: fakeapi.FaultHTTPError, Status: 429, RetryAfter: "17", For: "messages", Match: caseOf("429")},
		fakeapi.Fault{Kind: fakeapi.FaultHTTPError, Status: 529, For: "messages", Match: caseOf("529")},
		fakeapi.Fault{Kind: fakeapi.FaultCutStream, AfterEvents: 3, For: "messages", Match: caseOf("cut")},
		fakeapi.Fault{Kind: fakeapi.FaultStreamError, AfterEvents: 2, For: "messages", Match: caseOf("stream-error")},
		fakeapi.Fault{Kind: fakeapi.FaultMalformedJSON, AfterEvents: 2, For: "messages", Match: caseOf("malformed")},
		// The probe carries the client's credentials, not its other headers:
		// recognise it by the original body it counts.
		fakeapi.Fault{Kind: fakeapi.FaultHTTPError, Status: 500, For: "count_tokens", Match: func(r *fakeapi.Request) bool {
			return bytes.Contains(r.Body, []byte("case probe-500"))
		}},
	)
	fake := fakeapi.New(fakeapi.Options{Faults: faults, Gzip: true})
	t.Cleanup(fake.Close)
	home := t.TempDir()
	state := filepath.Join(home, "state")
	env := append(os.Environ(), "XDG_STATE_HOME="+state, "XDG_CONFIG_HOME="+filepath.Join(home, "config"))
	p := startProxydIn(t, env, filepath.Join(state, "synaxi"), fake.URL())

	body := func(name string, stream bool) []byte {
		return []byte(fmt.Sprintf(`{"model":"claude-sonnet-4-6","max_tokens":1024,"stream":%t,`+
			`"system":[{"type":"text","text":"You are Claude Code."},{"type":"text","text":"Marker: SYNAXI-PROJECTION-WORKER"}],`+
			`"messages":[{"role":"user","content":"fix the bug in main.go (case %s)"}]}`, stream, name))
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DisableCompression = true
	client := &http.Client{Transport: tr, Timeout: time.Minute}
	send := func(name string, stream bool, hdr map[string]string) (*http.Response, []byte, error) {
		req, err := http.NewRequest("POST", p.URL+"/v1/messages?beta=true", bytes.NewReader(body(name, stream)))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Api-Key", "test")
		req.Header.Set("Anthropic-Version", "2023-06-01")
		req.Header.Set("X-Claude-Code-Session-Id", "faults")
		req.Header.Set("X-Test-Case", name)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		got, err := io.ReadAll(resp.Body)
		return resp, got, err
	}

	resp, got, err := send("429", true, nil)
	require.NoError(t, err)
	assert.Equal(t, 429, resp.StatusCode)
	assert.Equal(t, "17", resp.Header.Get("Retry-After"))
	assert.Contains(t, string(got), `"rate_limit_error"`)

	resp, got, err = send("529", true, nil)
	require.NoError(t, err)
	assert.Equal(t, 529, resp.StatusCode)
	assert.Equal(t, "true", resp.Header.Get("X-Should-Retry"))
	assert.Contains(t, string(got), `"overloaded_error"`)

	_, got, err = send("cut", true, nil)
	assert.Error(t, err, "a cut stream reaches the client as a cut")
	assert.Contains(t, string(got), "event: message_start")

	resp, got, err = send("stream-error", true, nil)
	require.NoError(t, err)
	assert.Equal(t, 200, resp.StatusCode)
	assert.Contains(t, string(got), "event: error")

	_, got, err = send("malformed", true, nil)
	require.NoError(t, err)
	assert.Contains(t, string(got), "event: message_start")

	resp, got, err = send("gzip", false, map[string]string{"Accept-Encoding": "gzip"})
	require.NoError(t, err)
	assert.Equal(t, "gzip", resp.Header.Get("Content-Encoding"), "the encoded answer is passed through, not decoded")
	assert.Equal(t, []byte{0x1f, 0x8b}, got[:2])

	resp, _, err = send("probe-500", true, nil)
	require.NoError(t, err)
	assert.Equal(t, 200, resp.StatusCode)

	var rows []ledger.Row
	require.Eventually(t, func() bool { rows = readLedgerIn(t, filepath.Join(state, "synaxi")); return len(rows) == 7 }, 10*time.Second, 20*time.Millisecond)
	byStatus := map[int]int{}
	var nullReasons []string
	for _, r := range rows {
		byStatus[r.Status]++
		if r.Counterfactual == nil {
			nullReasons = append(nullReasons, r.CounterfactualNull)
		}
	}
	assert.Equal(t, map[int]int{429: 1, 529: 1, 200: 5}, byStatus)
	assert.Equal(t, []string{"count_tokens answered 500 api_error"}, nullReasons)
	for _, r := range rows {
		if r.Status == 200 && r.Counterfactual != nil {
			assert.Positive(t, r.Usage.BilledInput(), "usage read from the stream or the gzip body (%s)", r.ID)
		}
	}
	h := p.health(t)
	assert.Equal(t, int64(7), h.Gated)
	assert.Equal(t, int64(1), h.ProbeFailures)
	assert.Equal(t, int64(0), h.LedgerErrors)
}
