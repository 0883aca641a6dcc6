package server_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/synaxi/synaxi/proxyd/internal/gcpolicy"
	"github.com/synaxi/synaxi/proxyd/internal/server"
)

// percentile returns the q-quantile (0..1) of ds in microseconds.
func percentile(ds []time.Duration, q float64) float64 {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(q * float64(len(s)-1))
	return float64(s[i]) / float64(time.Microsecond)
}

func report(b *testing.B, direct, proxied []time.Duration) {
	if len(direct) == 0 {
		return
	}
	d50, d99 := percentile(direct, 0.50), percentile(direct, 0.99)
	p50, p99 := percentile(proxied, 0.50), percentile(proxied, 0.99)
	b.ReportMetric(d50, "direct-p50-µs")
	b.ReportMetric(d99, "direct-p99-µs")
	b.ReportMetric(p50, "proxy-p50-µs")
	b.ReportMetric(p99, "proxy-p99-µs")
	b.ReportMetric(p50-d50, "added-p50-µs")
	b.ReportMetric(p99-d99, "added-p99-µs")
	b.ReportMetric(0, "ns/op") // the per-op time mixes both paths; the metrics above are the result
}

// BenchmarkPassThrough measures the latency a non-worker Messages request
// gains by going through the proxy, against the same upstream called
// directly in the same run (alternating, so both see the same machine load).
func BenchmarkPassThrough(b *testing.B) {
	gcpolicy.Apply() // as synaxi-proxyd runs
	up := benchUpstream()
	defer up.Close()
	p := startProxy(b, up.URL, nil)
	for _, size := range []int{10 << 10, 1 << 20} {
		body := append([]byte(`{"model":"claude-sonnet-4-6","messages":[{"role":"user","content":"`), bytes.Repeat([]byte("a"), size)...)
		body = append(body, `"}]}`...)
		b.Run(fmt.Sprintf("%dKB", size>>10), func(b *testing.B) { benchAdded(b, up.URL, p, body) })
	}
}

// BenchmarkGated measures the latency a worker request gains through the
// proxy with the identity projector: the gate, the body's one validation,
// and the probe and ledger row beside it; the projection engine's own cost
// is BenchmarkProjectWarm/Cold in package projection.
func BenchmarkGated(b *testing.B) {
	gcpolicy.Apply() // as synaxi-proxyd runs
	up := benchUpstream()
	defer up.Close()
	p := startProxy(b, up.URL, nil)
	body := workerBody(`[{"role":"user","content":"` + strings.Repeat("a", 1<<20) + `"}]`)
	b.Run("1024KB", func(b *testing.B) { benchAdded(b, up.URL, p, body) })
}

// benchUpstream answers every Messages request with a small JSON message
// and count_tokens with a count.
func benchUpstream() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/count_tokens") {
			_, _ = io.WriteString(w, `{"input_tokens":100}`)
			return
		}
		_, _ = io.WriteString(w, `{"type":"message","model":"claude-sonnet-4-6","usage":{"input_tokens":100,"output_tokens":5}}`)
	}))
}

// benchAdded sends body alternately to the upstream directly and through
// the proxy, and reports both latencies and the difference.
func benchAdded(b *testing.B, direct string, p *proxy, body []byte) {
	c := rawClient()
	h := claudeHeaders()
	var ds, ps []time.Duration
	send := func(base string) time.Duration {
		start := time.Now()
		req, _ := http.NewRequest("POST", base+"/v1/messages?beta=true", bytes.NewReader(body))
		req.Header = h.Clone()
		resp, err := c.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return time.Since(start)
	}
	send(direct) // warm both connections
	send(p.URL)
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ds = append(ds, send(direct))
		ps = append(ps, send(p.URL))
	}
	b.StopTimer()
	p.Wait()
	report(b, ds, ps)
}

// BenchmarkFirstByte measures the time to the first streamed byte through
// the proxy against direct.
func BenchmarkFirstByte(b *testing.B) {
	gcpolicy.Apply() // as synaxi-proxyd runs
	rest := strings.Repeat("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hello\"}}\n\n", 20)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, sseStream[:strings.Index(sseStream, "event: ping")])
		w.(http.Flusher).Flush()
		_, _ = io.WriteString(w, rest)
		_, _ = io.WriteString(w, sseStream[strings.Index(sseStream, "event: ping"):])
	}))
	defer up.Close()
	p := startProxy(b, up.URL, nil)
	c := rawClient()
	body := []byte(`{"model":"claude-sonnet-4-6","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	ttfb := func(base string) time.Duration {
		start := time.Now()
		req, _ := http.NewRequest("POST", base+"/v1/messages?beta=true", bytes.NewReader(body))
		req.Header = claudeHeaders()
		resp, err := c.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		one := make([]byte, 1)
		if _, err := io.ReadFull(resp.Body, one); err != nil {
			b.Fatal(err)
		}
		d := time.Since(start)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return d
	}
	ttfb(up.URL)
	ttfb(p.URL)
	var direct, proxied []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		direct = append(direct, ttfb(up.URL))
		proxied = append(proxied, ttfb(p.URL))
	}
	b.StopTimer()
	p.Wait()
	report(b, direct, proxied)
}

// BenchmarkConcurrentStreams runs the real synaxi-proxyd binary with 50
// streams in flight at once and reports its peak resident memory (VmHWM)
// and the in-process heap of this benchmark's side (upstream + clients) for
// scale. Each stream lasts about a second and carries ~100 KB.
func BenchmarkConcurrentStreams(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("reads /proc")
	}
	dir := b.TempDir()
	bin := filepath.Join(dir, "synaxi-proxyd")
	build := exec.Command("go", "build", "-o", bin, "github.com/synaxi/synaxi/proxyd/cmd/synaxi-proxyd")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	chunk := "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"" + strings.Repeat("x", 1000) + "\"}}\n\n"
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		start := strings.Index(sseStream, "event: ping")
		_, _ = io.WriteString(w, sseStream[:start])
		for range 100 {
			_, _ = io.WriteString(w, chunk)
			w.(http.Flusher).Flush()
			time.Sleep(10 * time.Millisecond)
		}
		_, _ = io.WriteString(w, sseStream[start:])
	}))
	defer up.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "serve", "--listen", "127.0.0.1:0", "--upstream", up.URL, "--log-level", "warn")
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+filepath.Join(dir, "state"), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { cancel(); _ = cmd.Wait() }()
	addr := waitAddr(b, filepath.Join(dir, "state", "synaxi", "proxyd", "proxyd.json"))
	c := rawClient()
	c.Transport.(*http.Transport).MaxIdleConnsPerHost = 64
	body := []byte(`{"model":"claude-sonnet-4-6","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var wg sync.WaitGroup
		for range 50 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, _ := http.NewRequest("POST", "http://"+addr+"/v1/messages?beta=true", bytes.NewReader(body))
				req.Header = claudeHeaders()
				resp, err := c.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}()
		}
		wg.Wait()
	}
	b.StopTimer()
	hwm := procStatusKB(b, cmd.Process.Pid, "VmHWM")
	b.ReportMetric(float64(hwm)/1024, "proxy-peak-RSS-MB")
	b.ReportMetric(float64(procStatusKB(b, cmd.Process.Pid, "VmRSS"))/1024, "proxy-RSS-after-MB")
	b.ReportMetric(50, "streams")
}

func waitAddr(b *testing.B, path string) string {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if data, err := os.ReadFile(path); err == nil {
			if i := strings.Index(string(data), `"addr":"`); i >= 0 {
				rest := string(data)[i+8:]
				return rest[:strings.IndexByte(rest, '"')]
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	b.Fatal("proxy did not publish its address")
	return ""
}

func procStatusKB(b *testing.B, pid int, field string) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, field+":") {
			n, _ := strconv.ParseInt(strings.Fields(line)[1], 10, 64)
			return n
		}
	}
	return 0
}

var _ = server.IsLoopback
