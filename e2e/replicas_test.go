package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/e2e/fakeapi"
	"github.com/synaxi/synaxi/internal/ledger"
	"github.com/synaxi/synaxi/internal/visibility"
	"github.com/synaxi/synaxi/internal/xdg"
)

// startRedis runs a real redis-server on a free loopback port, with no
// persistence, until the test ends, and returns its URL.
func startRedis(t *testing.T, bin string) string {
	port := freePort(t)
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	}, 20*time.Second, 20*time.Millisecond, "redis-server did not come up")
	return "redis://" + addr + "/0"
}

// ledgerOf reads the ledger under a replica's state dir.
func ledgerOf(t *testing.T, state string) []ledger.Row {
	t.Helper()
	rows, err := ledger.Rows(xdg.Dirs{State: state})
	require.NoError(t, err)
	return rows
}

// needServer returns the path of a server the test starts itself, from a
// Debian package. Outside CI a missing one skips the test with how to get
// it; in CI, where .ci/run installs it, it fails the test.
func needServer(t *testing.T, name, pkg string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, dir := range []string{"/usr/sbin", "/usr/bin"} { // sbin is not on every PATH
		if p := filepath.Join(dir, name); fileExists(p) {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s not found: .ci/run installs the Debian package %s", name, pkg)
	}
	t.Skipf("%s not found: apt-get install %s (CI installs it)", name, pkg)
	return ""
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// replica is one synaxi-proxyd of a replicated deployment: its own port
// and its own XDG state, config and cache dirs, so nothing is shared but
// the upstream.
type replica struct {
	name, addr string
	state      string // its $XDG_STATE_HOME/synaxi
	args, env  []string
	logPath    string

	mu   sync.Mutex
	cmd  *exec.Cmd
	base int // ledger rows already in its state when this process started
}

func newReplica(t *testing.T, name string, env []string, upstream string, flags []string) *replica {
	root := t.TempDir()
	port := freePort(t)
	r := &replica{name: name, addr: fmt.Sprintf("127.0.0.1:%d", port), state: filepath.Join(root, "state", "synaxi"),
		logPath: filepath.Join(root, "proxyd.log")}
	r.env = append(slices.Clip(env), "XDG_STATE_HOME="+filepath.Join(root, "state"),
		"XDG_CONFIG_HOME="+filepath.Join(root, "config"), "XDG_CACHE_HOME="+filepath.Join(root, "cache"),
		"SYNAXI_PROXY_REPLICA="+name)
	r.args = append([]string{"serve", "--listen", r.addr, "--upstream", upstream}, flags...)
	t.Cleanup(func() { r.stop() })
	return r
}

// start runs the replica and waits for /livez.
func (r *replica) start() error {
	bin, err := buildProxyOnce()
	if err != nil {
		return err
	}
	logf, err := os.OpenFile(r.logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(bin, r.args...)
	cmd.Env = r.env
	cmd.Stdout, cmd.Stderr = logf, logf
	base, err := ledgerRows(r.state)
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	r.mu.Lock()
	r.cmd, r.base = cmd, base
	r.mu.Unlock()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get("http://" + r.addr + "/livez"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("replica %s did not answer /livez in 30s", r.name)
}

// kill ends the replica with SIGKILL: no drain, nothing flushed.
func (r *replica) kill() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd != nil {
		_ = r.cmd.Process.Signal(syscall.SIGKILL)
		_ = r.cmd.Wait()
		r.cmd = nil
	}
}

// stop ends the replica with SIGTERM (its drain) and waits.
func (r *replica) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd == nil {
		return
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = r.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = r.cmd.Process.Kill()
		<-done
	}
	r.cmd = nil
}

// health reads the replica's /health.
func (r *replica) health() (h struct{ Gated, Active int64 }, err error) {
	resp, err := http.Get("http://" + r.addr + "/health")
	if err != nil {
		return h, err
	}
	defer resp.Body.Close()
	return h, json.NewDecoder(resp.Body).Decode(&h)
}

// flushed reports whether every gated request the running process took
// has its ledger row, and none is in flight. It may run on any goroutine.
func (r *replica) flushed() bool {
	h, err := r.health()
	if err != nil || h.Active != 0 {
		return false
	}
	r.mu.Lock()
	base := r.base
	r.mu.Unlock()
	n, err := ledgerRows(r.state)
	return err == nil && int64(n) == int64(base)+h.Gated
}

// ledgerRows counts the rows of the ledger under state (0 when there is
// none yet).
func ledgerRows(state string) (int, error) {
	b, err := os.ReadFile(filepath.Join(state, "ledger", "ledger.jsonl"))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	return bytes.Count(b, []byte("\n")), err
}

// servesMetrics reports whether the replica answers /metrics itself in
// Prometheus' text format.
func (r *replica) servesMetrics() bool {
	resp, err := http.Get("http://" + r.addr + "/metrics")
	if err != nil {
		return false
	}
	resp.Body.Close()
	// Prometheus' text format, empty until something is counted.
	return resp.StatusCode == 200 && strings.Contains(resp.Header.Get("Content-Type"), "version=0.0.4")
}

// startHAProxy runs HAProxy in the foreground on a loopback port,
// round-robin over the replicas, configured as a team would run it in
// front of stateless replicas: health checks on /livez, and a request whose
// connection to a dead replica fails is retried and redispatched to
// another. It returns the frontend's base URL.
func startHAProxy(t *testing.T, bin string, reps []*replica) string {
	port := freePort(t)
	var servers strings.Builder
	for _, r := range reps {
		fmt.Fprintf(&servers, "    server %s %s check inter 300ms fall 1 rise 1\n", r.name, r.addr)
	}
	cfg := fmt.Sprintf(`global
    maxconn 512

defaults
    mode http
    timeout connect 2s
    timeout client 10m
    timeout server 10m
    retries 3
    option redispatch 1
    retry-on conn-failure empty-response response-timeout

frontend synaxi
    bind 127.0.0.1:%d
    default_backend replicas

backend replicas
    balance roundrobin
    option httpchk
    http-check send meth GET uri /livez
%s`, port, servers.String())
	dir := t.TempDir()
	path := filepath.Join(dir, "haproxy.cfg")
	require.NoError(t, os.WriteFile(path, []byte(cfg), 0o600))
	out, err := exec.Command(bin, "-c", "-f", path).CombinedOutput()
	require.NoError(t, err, "haproxy -c:\n%s", out)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	runServer(t, dir, base+"/livez", bin, "-db", "-f", path)
	return base
}

// runServer runs a server the test needs in the foreground, its output in
// dir (shown if the test fails), until the test ends, and waits until
// ready answers 200.
func runServer(t *testing.T, dir, ready, bin string, args ...string) {
	name := filepath.Base(bin)
	logPath := filepath.Join(dir, name+".log")
	logf, err := os.Create(logPath)
	require.NoError(t, err)
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("%s log:\n%s", name, b)
		}
	})
	require.Eventually(t, func() bool {
		resp, err := http.Get(ready)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	}, 60*time.Second, 50*time.Millisecond, "%s did not become ready", name)
}

// prometheus is a Prometheus server the test runs, scraping the replicas.
type prometheus struct{ base string }

func startPrometheus(t *testing.T, bin string, reps []*replica) *prometheus {
	port := freePort(t)
	dir := t.TempDir()
	var targets []string
	for _, r := range reps {
		targets = append(targets, strconv.Quote(r.addr))
	}
	cfg := fmt.Sprintf("global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\nscrape_configs:\n"+
		"  - job_name: synaxi-proxyd\n    static_configs:\n      - targets: [%s]\n", strings.Join(targets, ", "))
	path := filepath.Join(dir, "prometheus.yml")
	require.NoError(t, os.WriteFile(path, []byte(cfg), 0o600))
	p := &prometheus{base: fmt.Sprintf("http://127.0.0.1:%d", port)}
	runServer(t, dir, p.base+"/-/ready", bin, "--config.file="+path, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", port), "--log.level=warn")
	return p
}

// sample is one series of an instant query's answer.
type sample struct {
	Labels map[string]string
	Value  float64
}

// query runs an instant PromQL query at at (zero: now).
func (p *prometheus) query(q string, at time.Time) ([]sample, error) {
	v := url.Values{"query": {q}}
	if !at.IsZero() {
		v.Set("time", strconv.FormatFloat(float64(at.UnixNano())/1e9, 'f', 3, 64))
	}
	resp, err := http.Get(p.base + "/api/v1/query?" + v.Encode())
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, err
	}
	if body.Status != "success" {
		return nil, fmt.Errorf("prometheus query %q: %s", q, body.Error)
	}
	var out []sample
	for _, r := range body.Data.Result {
		s, _ := r.Value[1].(string)
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("prometheus query %q: value %q", q, s)
		}
		out = append(out, sample{r.Metric, f})
	}
	return out, nil
}

// scrapedSince waits until Prometheus holds a successful scrape of every
// replica taken after since. It may run on any goroutine.
func (p *prometheus) scrapedSince(since time.Time, reps ...*replica) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		done := true
		for _, r := range reps {
			got, err := p.query(fmt.Sprintf(`timestamp(up{instance=%q} == 1)`, r.addr), time.Time{})
			if err != nil || len(got) != 1 || got[0].Value < float64(since.UnixNano())/1e9 {
				done = false
			}
		}
		if done {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("prometheus has no scrape of every replica since %s", since.Format(time.RFC3339Nano))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// holds waits until Prometheus' counterfactual for the replica equals its
// ledger's, so what the replica counted before a kill is in Prometheus. It
// may run on any goroutine.
func (p *prometheus) holds(r *replica) error {
	rows, err := ledger.Rows(xdg.Dirs{State: r.state})
	if err != nil {
		return err
	}
	var want int64
	for _, row := range rows {
		if row.Counterfactual != nil {
			want += *row.Counterfactual
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := p.query(selector("synaxi_counterfactual_tokens_total", fmt.Sprintf("instance=%q", r.addr)), time.Time{})
		var sum float64
		for _, s := range got {
			sum += s.Value
		}
		if err == nil && int64(sum) == want {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("prometheus holds %.0f counterfactual tokens of %s, its ledger %d", sum, r.name, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// tokenMetrics are the token series the replicas export (docs/deploy.md),
// by name and label matchers, each with the ledger field it must sum to
// over the replicas.
var tokenMetrics = []struct {
	name, match string
	field       func(r *ledger.Row) int64
}{
	{"synaxi_tokens_total", `gen_ai_token_type="input"`, func(r *ledger.Row) int64 { return r.Usage.Input }},
	{"synaxi_tokens_total", `gen_ai_token_type="cache_read"`, func(r *ledger.Row) int64 { return r.Usage.CacheRead }},
	{"synaxi_tokens_total", `gen_ai_token_type="cache_creation"`, func(r *ledger.Row) int64 { return r.Usage.CacheWrite5m + r.Usage.CacheWrite1h }},
	{"synaxi_tokens_total", `gen_ai_token_type="output"`, func(r *ledger.Row) int64 { return r.Usage.Output }},
	{"gen_ai_client_token_usage_sum", `gen_ai_token_type="input"`, func(r *ledger.Row) int64 { return r.Usage.BilledInput() }},
	{"gen_ai_client_token_usage_sum", `gen_ai_token_type="output"`, func(r *ledger.Row) int64 { return r.Usage.Output }},
	{"synaxi_counterfactual_tokens_total", "", func(r *ledger.Row) int64 {
		if r.Counterfactual == nil {
			return 0
		}
		return *r.Counterfactual
	}},
	{"synaxi_saved_tokens", "", func(r *ledger.Row) int64 { n, _ := r.Saved(); return n }},
}

// selector is a metric's series selector, with more matchers.
func selector(name string, matchers ...string) string {
	var ms []string
	for _, m := range matchers {
		if m != "" {
			ms = append(ms, m)
		}
	}
	return name + "{" + strings.Join(ms, ",") + "}"
}

// ledgerTotals folds rows into one summary (every session), with the
// dollar figure left out: compared apart, summed in another order.
func ledgerTotals(rows []ledger.Row) (ledger.Summary, float64) {
	var s ledger.Summary
	for i := range rows {
		s.Add(&rows[i])
	}
	usd := s.SavedUSD
	s.SavedUSD, s.Session, s.Updated, s.Model = 0, "", time.Time{}, ""
	return s, usd
}

func digests(reqs []*fakeapi.Request) []string {
	var out []string
	for _, r := range reqs {
		out = append(out, fmt.Sprintf("%x", sha256.Sum256(r.Body)))
	}
	slices.Sort(out)
	return out
}

// TestReplicasBehindHAProxy runs the real client as the worker through
// HAProxy, round-robin over 3 synaxi-proxyd replicas (each with its own
// state dirs) against the fake upstream, with Prometheus scraping the
// replicas. Mid-session one replica with nothing in flight is killed with
// SIGKILL and, a few requests later, restarted. Then the client's exact
// requests are replayed, in order, through one fresh replica against a
// fresh fake upstream, and:
//   - no request the client sent was broken (every answer 200, no retry);
//   - the upstream got the same bytes for every request;
//   - the fake's simulated prompt cache counted the same hits and tokens;
//   - the ledgers summed over the replicas equal the single run's, to the
//     token;
//   - Prometheus' sum over the replicas of each token metric equals the
//     sum of the same field over their ledgers.
func TestReplicasBehindHAProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("drives the real client")
	}
	haproxyBin := needServer(t, "haproxy", "haproxy")
	promBin := needServer(t, "prometheus", "prometheus")
	redisURL := startRedis(t, needServer(t, "redis-server", "redis-server"))
	_, err := buildProxyOnce()
	require.NoError(t, err)

	var (
		reps []*replica
		tp   *Tap
		prom *prometheus
		lb   string
	)
	route := func(t *testing.T, env []string, upstream string, flags []string) (string, string) {
		for i := range 3 {
			r := newReplica(t, fmt.Sprintf("r%d", i), env, upstream, append(slices.Clip(flags), "--visibility-store", redisURL))
			require.NoError(t, r.start())
			reps = append(reps, r)
		}
		lb = startHAProxy(t, haproxyBin, reps)
		require.True(t, reps[0].servesMetrics(), "synaxi-proxyd answers /metrics in Prometheus' text format")
		prom = startPrometheus(t, promBin, reps)
		tp = NewTap(t, lb)
		return tp.URL, reps[0].logPath
	}

	// The kill: at the agent's 10th answer (a request in flight on one
	// replica), an idle replica whose rows are all written, and scraped, is
	// killed; at the 14th it is restarted on the same port and state.
	const killAt, restartAt = 10, 14
	var (
		turns    atomic.Int32
		killed   *replica
		killTime time.Time
		faults   []string
		faultsMu sync.Mutex
		addFault = func(f string, a ...any) {
			faultsMu.Lock()
			faults = append(faults, fmt.Sprintf(f, a...))
			faultsMu.Unlock()
		}
		killState = func() {
			deadline := time.Now().Add(30 * time.Second)
			for time.Now().Before(deadline) && killed == nil {
				for _, r := range reps {
					if r.flushed() {
						killed = r
						break
					}
				}
				time.Sleep(50 * time.Millisecond)
			}
			if killed == nil {
				addFault("no idle replica with every row written to kill")
				return
			}
			if err := prom.scrapedSince(time.Now(), killed); err != nil {
				addFault("before the kill: %v", err)
			}
			if err := prom.holds(killed); err != nil {
				addFault("before the kill: %v", err)
			}
			killTime = time.Now()
			killed.kill()
			t.Logf("killed %s (SIGKILL) before the agent's answer %d", killed.name, killAt)
		}
	)
	wrap := func(a fakeapi.Agent) fakeapi.Agent {
		return fakeapi.AgentFunc(func(v *fakeapi.View) fakeapi.Reply {
			switch turns.Add(1) {
			case killAt:
				killState()
			case restartAt:
				if killed != nil {
					if err := killed.start(); err != nil {
						addFault("restart %s: %v", killed.name, err)
					} else {
						t.Logf("restarted %s before the agent's answer %d", killed.name, restartAt)
					}
				}
			}
			return a.Respond(v)
		})
	}
	run := runSurveyVia(t, true, false, route, wrap)
	require.Empty(t, faults)
	require.NotNil(t, killed, "a replica was killed mid-session")
	require.GreaterOrEqual(t, int(turns.Load()), restartAt, "the session outlived the restart")
	assert.Contains(t, run.stdout, "ALL CHECKS PASS")
	assert.Zero(t, run.invalid)

	// No request broken: the client got 200 for everything it sent, and
	// never retried (the SDK numbers its retries).
	sent := tp.Requests()
	for i, r := range sent {
		assert.Equal(t, 200, r.Status, "request %d %s %s", i, r.Method, r.Path)
		if n := r.Header.Get("X-Stainless-Retry-Count"); n != "" {
			assert.Equal(t, "0", n, "request %d was a retry", i)
		}
	}

	// Every replica's rows written, then scraped.
	require.Eventually(t, func() bool {
		for _, r := range reps {
			if !r.flushed() {
				return false
			}
		}
		return true
	}, 60*time.Second, 100*time.Millisecond, "every replica wrote its rows")
	flushed := time.Now()
	var replicated []ledger.Row
	perReplica := map[string]int{}
	for _, r := range reps {
		rows := ledgerOf(t, r.state)
		perReplica[r.name] = len(rows)
		replicated = append(replicated, rows...)
	}
	t.Logf("ledger rows per replica: %v", perReplica)
	for name, n := range perReplica {
		assert.Positive(t, n, "round-robin gave %s a share", name)
	}

	// The same requests through one replica.
	var mu sync.Mutex
	fake2 := fakeapi.New(fakeapi.Options{Agent: surveyAgent(run.env.Work, map[string]int{}, &mu)})
	t.Cleanup(fake2.Close)
	single := newReplica(t, "single", run.env.Environ(), fake2.URL(), nil)
	single.env = append(single.env, fmt.Sprintf("SYNAXI_PROJECTION_BUDGET_TOKENS=%d", surveyBudget))
	require.NoError(t, single.start())
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}, Timeout: 2 * time.Minute}
	replayed := 0
	for _, r := range sent {
		if r.Method != http.MethodPost || !strings.HasPrefix(r.Path, "/v1/messages") {
			continue
		}
		u := "http://" + single.addr + r.Path
		if r.RawQuery != "" {
			u += "?" + r.RawQuery
		}
		req, err := http.NewRequest(r.Method, u, bytes.NewReader(r.Body))
		require.NoError(t, err)
		req.Header = r.Header.Clone()
		resp, err := client.Do(req)
		require.NoError(t, err)
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, 200, resp.StatusCode, "replayed %s", r.Path)
		replayed++
	}
	require.Eventually(t, func() bool { return single.flushed() }, 60*time.Second, 100*time.Millisecond)
	singleRows := ledgerOf(t, single.state)

	// The hook's visibility call through the balancer: whichever replica
	// answers, the same export (the latest, from the shared store).
	last := replicated[len(replicated)-1]
	q := url.Values{"session": {last.Session}, "agent": {last.Agent}}
	var exports []string
	for range 2 * len(reps) {
		resp, err := http.Get(lb + "/synaxi/v1/visibility?" + q.Encode())
		require.NoError(t, err)
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, 200, resp.StatusCode, "visibility through HAProxy: %s", b)
		exports = append(exports, string(b))
	}
	for _, e := range exports[1:] {
		assert.Equal(t, exports[0], e, "every replica answers the same export")
	}
	var newest *visibility.Export // of the replicas' own copies
	for _, r := range reps {
		e, err := visibility.Read(xdg.Dirs{State: r.state}, last.Session, last.Agent)
		if err == nil && (newest == nil || e.Updated.After(newest.Updated)) {
			newest = e
		}
	}
	require.NotNil(t, newest, "some replica wrote the context's export")
	var answered visibility.Export
	require.NoError(t, json.Unmarshal([]byte(exports[0]), &answered))
	assert.True(t, newest.Updated.Equal(answered.Updated), "the answer is the latest export, whichever replica wrote it")
	assert.Equal(t, newest.Files, answered.Files)

	// Served bytes.
	got, want := run.fake.MessagesRequests(), fake2.MessagesRequests()
	require.Len(t, got, len(want))
	assert.Equal(t, digests(want), digests(got), "the upstream got the same bytes for every request")
	// Cache hits.
	gotCache, wantCache := run.fake.CacheStats(), fake2.CacheStats()
	t.Logf("simulated cache, 3 replicas: %+v", gotCache)
	t.Logf("simulated cache, 1 replica:  %+v", wantCache)
	assert.Equal(t, wantCache, gotCache, "the same prompt cache hits and tokens")
	// Ledger totals.
	repSum, repUSD := ledgerTotals(replicated)
	oneSum, oneUSD := ledgerTotals(singleRows)
	t.Logf("%d requests replayed; ledger, 3 replicas: %d rows, counterfactual %d, saved %d tokens, $%.4f; 1 replica: %d rows, counterfactual %d, saved %d tokens, $%.4f",
		replayed, len(replicated), repSum.Counterfactual, repSum.SavedTokens, repUSD, len(singleRows), oneSum.Counterfactual, oneSum.SavedTokens, oneUSD)
	assert.Positive(t, oneSum.Projected, "the projection engaged")
	assert.Equal(t, oneSum, repSum, "ledger totals summed over the replicas equal one replica's, to the token")
	assert.InDelta(t, oneUSD, repUSD, 1e-9, "saved dollars")

	// Prometheus: the sum over the replicas of each token metric, the
	// killed replica's counters before its death included, equals the
	// sum of the ledgers.
	t.Run("prometheus", func(t *testing.T) {
		require.NoError(t, prom.scrapedSince(flushed, reps...))
		for _, m := range tokenMetrics {
			var want int64
			for i := range replicated {
				want += m.field(&replicated[i])
			}
			sel := selector(m.name, m.match)
			var sum float64
			var series, killedSeries int
			// Prometheus may answer from a scrape taken just before the last
			// rows on a loaded machine: the sums may lag, never exceed.
			ok := assert.Eventually(t, func() bool {
				now, err := prom.query(sel, time.Time{})
				if err != nil {
					return false
				}
				before, err := prom.query(selector(m.name, m.match, fmt.Sprintf("instance=%q", killed.addr)), killTime)
				if err != nil {
					return false
				}
				sum, series, killedSeries = 0, len(now), len(before)
				for _, s := range append(now, before...) {
					sum += s.Value
				}
				return series > 0 && sum == float64(want)
			}, 30*time.Second, 250*time.Millisecond, "%s summed over the replicas (and %s before its kill)", sel, killed.name)
			t.Logf("%s: %.0f over the replicas (%d series now, %d of %s before its kill), %d in the ledgers",
				sel, sum, series, killedSeries, killed.name, want)
			if !ok {
				t.Errorf("%s: %.0f over the replicas, %d in the ledgers", sel, sum, want)
			}
		}
	})
}
