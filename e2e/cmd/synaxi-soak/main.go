// Command synaxi-soak puts synaxi-proxyd under a bounded load on loopback
// and reports what it costs. Concurrent synthetic sessions, each a growing
// conversation, stream through the proxy to the fake upstream (package
// fakeapi, in this process) for a fixed time, while a smaller group sends
// the same kind of requests to the fake directly, as the baseline of the
// same run. It stops by itself.
//
//	synaxi-soak -proxyd BIN [-duration 10m] [-sessions 64] [-direct 16] [-think 1s] [-turns 24]
//
// Half the sessions carry the synaxi-worker marker, so their requests are
// gated (projected, probed with count_tokens, written to the ledger); the
// other half pass through. A request is broken when it gets no answer, a
// status other than 200, or a stream without message_stop. The proxy's
// resident memory is sampled every few seconds from /proc. At the end the
// proxy gets SIGTERM and must drain and exit 0. The report is Markdown on
// stdout; the exit status is 1 when any request broke or the proxy did not
// exit 0.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/synaxi/synaxi/e2e/fakeapi"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

type config struct {
	proxyd   string
	duration time.Duration
	sessions int
	direct   int
	think    time.Duration
	turns    int
}

func run(args []string, stdout, stderr io.Writer) int {
	var c config
	fs := flag.NewFlagSet("synaxi-soak", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.proxyd, "proxyd", "", "synaxi-proxyd binary to run")
	fs.DurationVar(&c.duration, "duration", 10*time.Minute, "how long the sessions send")
	fs.IntVar(&c.sessions, "sessions", 64, "concurrent sessions through the proxy")
	fs.IntVar(&c.direct, "direct", 16, "concurrent sessions straight to the fake upstream (the baseline)")
	fs.DurationVar(&c.think, "think", time.Second, "mean pause between a session's requests (uniform from half to 1.5 times)")
	fs.IntVar(&c.turns, "turns", 24, "requests per conversation before the session starts a new one")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if c.proxyd == "" || c.sessions < 1 || c.direct < 0 || c.duration <= 0 || c.turns < 1 {
		fmt.Fprintln(stderr, "synaxi-soak: -proxyd BIN is required; -sessions, -turns and -duration must be positive")
		return 2
	}
	rep, err := soak(c, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "synaxi-soak: %v\n", err)
		return 1
	}
	rep.write(stdout, c)
	if rep.broken() > 0 || rep.exitErr != nil {
		return 1
	}
	return 0
}

// sample is one request's timings.
type sample struct {
	worker     bool
	ttfb, full time.Duration
}

// group is what one set of sessions saw.
type group struct {
	mu      sync.Mutex
	samples []sample
	broken  map[string]int // why → how many
}

func (g *group) add(s sample, why string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if why != "" {
		g.broken[why]++
		return
	}
	g.samples = append(g.samples, s)
}

type rssSample struct {
	at  time.Duration
	kiB int64
}

type report struct {
	proxied, direct group
	rss             []rssSample
	warmup          time.Duration
	exitErr         error
	drain           time.Duration
	addedBuckets    map[float64]float64 // the proxy's own histogram: le → cumulative count
	ledgerRows      int
}

func (r *report) broken() int {
	n := 0
	for _, g := range []*group{&r.proxied, &r.direct} {
		for _, k := range g.broken {
			n += k
		}
	}
	return n
}

func soak(c config, log io.Writer) (*report, error) {
	tmp, err := os.MkdirTemp("", "synaxi-soak-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	fake, err := fakeapi.Listen("127.0.0.1:0", fakeapi.Options{KeepNone: true})
	if err != nil {
		return nil, err
	}
	defer fake.Close()
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(tmp, "proxyd.log"))
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	proxy := exec.Command(c.proxyd, "serve", "--listen", addr, "--upstream", fake.URL(), "--idle-exit", "0", "--log-level", "warn")
	proxy.Env = append(os.Environ(), "XDG_STATE_HOME="+filepath.Join(tmp, "state"), "XDG_CONFIG_HOME="+filepath.Join(tmp, "config"))
	proxy.Stdout, proxy.Stderr = logf, logf
	if err := proxy.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", c.proxyd, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- proxy.Wait() }()
	defer func() { _ = proxy.Process.Kill() }()
	base := "http://" + addr
	if err := waitLive(base, exited); err != nil {
		return nil, err
	}

	rep := &report{proxied: group{broken: map[string]int{}}, direct: group{broken: map[string]int{}}}
	rep.warmup = min(c.duration/5, 2*time.Minute)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: c.sessions + c.direct, DisableCompression: true}, Timeout: 2 * time.Minute}
	ctx, cancel := context.WithTimeout(context.Background(), c.duration)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	for i := range c.sessions + c.direct {
		target, g := base, &rep.proxied
		if i >= c.sessions {
			target, g = fake.URL(), &rep.direct
		}
		wg.Go(func() { session(ctx, client, target, i, i%2 == 0, c, g) })
	}
	samplerDone := make(chan struct{})
	go func() {
		defer close(samplerDone)
		t := time.NewTicker(5 * time.Second)
		defer t.Stop()
		for {
			if kib, err := rssKiB(proxy.Process.Pid); err == nil {
				rep.rss = append(rep.rss, rssSample{time.Since(start), kib})
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				rep.proxied.mu.Lock()
				n := len(rep.proxied.samples)
				rep.proxied.mu.Unlock()
				fmt.Fprintf(log, "soak: %s, %d proxied requests answered\n", time.Since(start).Round(time.Second), n)
			}
		}
	}()
	wg.Wait()
	<-samplerDone
	rep.addedBuckets, err = addedLatency(client, base)
	if err != nil {
		fmt.Fprintf(log, "soak: read /metrics: %v\n", err)
	}
	t0 := time.Now()
	_ = proxy.Process.Signal(syscall.SIGTERM)
	select {
	case rep.exitErr = <-exited:
	case <-time.After(time.Minute):
		rep.exitErr = errors.New("no exit within a minute of SIGTERM")
	}
	rep.drain = time.Since(t0)
	rep.ledgerRows = countLines(filepath.Join(tmp, "state", "synaxi", "ledger", "ledger.jsonl"))
	if rep.broken() > 0 || rep.exitErr != nil {
		b, _ := os.ReadFile(logf.Name())
		fmt.Fprintf(log, "soak: proxy log:\n%s\n", tail(b, 40))
	}
	return rep, nil
}

// session sends conversations until ctx is done; each request waits for
// the answer to the previous one, then a think pause.
func session(ctx context.Context, c *http.Client, target string, id int, worker bool, cfg config, g *group) {
	rng := rand.New(rand.NewPCG(uint64(id), 7))
	for conv := 0; ctx.Err() == nil; conv++ {
		sid := fmt.Sprintf("soak-%d-%d", id, conv)
		var msgs []json.RawMessage
		for turn := 0; turn < cfg.turns && ctx.Err() == nil; turn++ {
			msgs = append(msgs, userTurn(rng, turn))
			body := requestBody(worker, msgs)
			s, why := send(c, target, sid, body)
			s.worker = worker
			if ctx.Err() != nil && why != "" {
				return // cut by the end of the run, not by the proxy
			}
			g.add(s, why)
			msgs = append(msgs, json.RawMessage(`{"role":"assistant","content":[{"type":"text","text":"Done with that step."}]}`))
			pause := time.Duration(float64(cfg.think) * (0.5 + rng.Float64()))
			select {
			case <-ctx.Done():
				return
			case <-time.After(pause):
			}
		}
	}
}

var words = strings.Fields("the proxy forwards every request byte for byte and projects the worker's context into a bounded cache stable prefix while the ledger records what each request was billed against count tokens")

// userTurn is a user message of about 1.5 KB: a tool's output pasted back.
func userTurn(rng *rand.Rand, turn int) json.RawMessage {
	var b strings.Builder
	fmt.Fprintf(&b, "Step %d. Output follows:\n", turn)
	for b.Len() < 1500 {
		b.WriteString(words[rng.IntN(len(words))])
		b.WriteByte(' ')
	}
	text, _ := json.Marshal(b.String())
	return json.RawMessage(`{"role":"user","content":[{"type":"text","text":` + string(text) + `}]}`)
}

const workerMarker = "SYNAXI-PROJECTION-WORKER\nWork the loop."

func requestBody(worker bool, msgs []json.RawMessage) []byte {
	system := `[{"type":"text","text":"x-anthropic-billing-header: cc_version=2.1.332"},{"type":"text","text":"You are Claude Code, working in a repository."}`
	if worker {
		m, _ := json.Marshal(workerMarker)
		system += `,{"type":"text","text":` + string(m) + `}`
	}
	system += `]`
	var b bytes.Buffer
	b.WriteString(`{"model":"claude-sonnet-4-6","max_tokens":32000,"stream":true,"system":`)
	b.WriteString(system)
	b.WriteString(`,"tools":[{"name":"Read","description":"Read a file","input_schema":{"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"]}}],"messages":[`)
	for i, m := range msgs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(m)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// send posts one request and reads its stream to the end.
func send(c *http.Client, target, sid string, body []byte) (sample, string) {
	req, err := http.NewRequest(http.MethodPost, target+"/v1/messages?beta=true", bytes.NewReader(body))
	if err != nil {
		return sample{}, "build request"
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Api-Key", "sk-ant-api03-soak")
	req.Header.Set("Anthropic-Version", "2023-06-01")
	req.Header.Set("X-Claude-Code-Session-Id", sid)
	t0 := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return sample{}, "no answer"
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	_, err = br.Peek(1)
	ttfb := time.Since(t0)
	if err != nil {
		return sample{}, "empty body"
	}
	rest, err := io.ReadAll(br)
	full := time.Since(t0)
	switch {
	case err != nil:
		return sample{}, "stream cut"
	case resp.StatusCode != http.StatusOK:
		return sample{}, "status " + strconv.Itoa(resp.StatusCode)
	case !bytes.Contains(rest, []byte("event: message_stop")):
		return sample{}, "stream without message_stop"
	}
	return sample{ttfb: ttfb, full: full}, ""
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func waitLive(base string, exited <-chan error) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			return fmt.Errorf("synaxi-proxyd exited at start: %v", err)
		default:
		}
		if resp, err := http.Get(base + "/livez"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return errors.New("synaxi-proxyd did not answer /livez within 30s")
}

func rssKiB(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		}
	}
	return 0, errors.New("no VmRSS")
}

// addedLatency reads the proxy's own added-latency histogram, summed over
// its labels: upper bound → cumulative count.
func addedLatency(c *http.Client, base string) (map[float64]float64, error) {
	resp, err := c.Get(base + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[float64]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "synaxi_proxy_added_latency_seconds_bucket{") {
			continue
		}
		i := strings.Index(line, `le="`)
		j := strings.LastIndexByte(line, ' ')
		if i < 0 || j < 0 {
			continue
		}
		le, err1 := strconv.ParseFloat(strings.SplitN(line[i+4:], `"`, 2)[0], 64)
		n, err2 := strconv.ParseFloat(line[j+1:], 64)
		if err1 == nil && err2 == nil {
			out[le] += n
		}
	}
	return out, sc.Err()
}

func countLines(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	return bytes.Count(b, []byte("\n"))
}

func tail(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(math.Ceil(q*float64(len(s))))-1)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond)) }

// pick returns the ttfb and full durations of the samples of one class.
func pick(g *group, worker bool) (ttfb, full []time.Duration) {
	for _, s := range g.samples {
		if s.worker == worker {
			ttfb = append(ttfb, s.ttfb)
			full = append(full, s.full)
		}
	}
	return ttfb, full
}

func (r *report) write(w io.Writer, c config) {
	fmt.Fprintf(w, "### Load and soak: %d sessions through the proxy for %s\n\n", c.sessions, c.duration)
	fmt.Fprintf(w, "- requests through the proxy: %d answered, %d broken", len(r.proxied.samples), r.broken())
	if r.broken() > 0 {
		fmt.Fprintf(w, " (%v proxied, %v direct)", r.proxied.broken, r.direct.broken)
	}
	fmt.Fprintf(w, "\n- baseline straight to the fake upstream, same run: %d sessions, %d requests\n", c.direct, len(r.direct.samples))
	fmt.Fprintf(w, "- ledger rows written (gated worker requests): %d\n", r.ledgerRows)
	exit := "0"
	if r.exitErr != nil {
		exit = r.exitErr.Error()
	}
	fmt.Fprintf(w, "- SIGTERM at the end: exit %s after %s\n\n", exit, r.drain.Round(time.Millisecond))
	fmt.Fprintln(w, "| sessions | path | requests | time to first byte p50 / p99 ms | whole stream p50 / p99 ms | p99 added vs direct ms |")
	fmt.Fprintln(w, "| --- | --- | ---: | ---: | ---: | ---: |")
	for _, worker := range []bool{false, true} {
		kind := "pass-through"
		if worker {
			kind = "worker (gated)"
		}
		dt, df := pick(&r.direct, worker)
		pt, pf := pick(&r.proxied, worker)
		fmt.Fprintf(w, "| %s | direct | %d | %s / %s | %s / %s | |\n", kind, len(dt), ms(quantile(dt, .5)), ms(quantile(dt, .99)), ms(quantile(df, .5)), ms(quantile(df, .99)))
		fmt.Fprintf(w, "| %s | proxy | %d | %s / %s | %s / %s | %s |\n", kind, len(pt), ms(quantile(pt, .5)), ms(quantile(pt, .99)), ms(quantile(pf, .5)), ms(quantile(pf, .99)), ms(quantile(pt, .99)-quantile(dt, .99)))
	}
	if p99, ok := histQuantile(r.addedBuckets, .99); ok {
		fmt.Fprintf(w, "\nThe proxy's own `synaxi_proxy_added_latency_seconds` (arrival to sending upstream, all requests): p99 ≤ %s ms (the histogram's bucket bound).\n", ms(time.Duration(p99*float64(time.Second))))
	}
	fmt.Fprintln(w)
	r.writeRSS(w)
}

// histQuantile is the upper bound of the bucket holding quantile q.
func histQuantile(b map[float64]float64, q float64) (float64, bool) {
	total := b[math.Inf(1)]
	if total == 0 {
		return 0, false
	}
	les := make([]float64, 0, len(b))
	for le := range b {
		les = append(les, le)
	}
	slices.Sort(les)
	for _, le := range les {
		if b[le] >= q*total {
			return le, true
		}
	}
	return 0, false
}

func (r *report) writeRSS(w io.Writer) {
	var after []rssSample
	var atWarm int64
	for _, s := range r.rss {
		if s.at < r.warmup {
			atWarm = s.kiB
			continue
		}
		after = append(after, s)
	}
	if len(after) < 2 {
		fmt.Fprintln(w, "Resident memory: too few samples after the warm-up.")
		return
	}
	var peak int64
	for _, s := range after {
		peak = max(peak, s.kiB)
	}
	// Least-squares slope over the samples after the warm-up.
	var sx, sy, sxx, sxy float64
	for _, s := range after {
		x, y := s.at.Minutes(), float64(s.kiB)/1024
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	n := float64(len(after))
	slope := (n*sxy - sx*sy) / (n*sxx - sx*sx)
	fmt.Fprintf(w, "Resident memory of synaxi-proxyd (VmRSS every 5 s, %d samples): %.1f MiB at the end of the %s warm-up, peak %.1f MiB after it, %.1f MiB at the end; slope after warm-up %+.2f MiB/min.\n",
		len(r.rss), float64(atWarm)/1024, r.warmup, float64(peak)/1024, float64(after[len(after)-1].kiB)/1024, slope)
}
