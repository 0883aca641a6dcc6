package fakeapi

import (
	"bytes"
	"io"
	"net/http"
	"sort"
	"testing"
	"time"
)

// benchRoundTrips posts body b.N times and reports p50/p99 round-trip
// latency (whole answer read) in microseconds.
func benchRoundTrips(b *testing.B, path string, body []byte) {
	s := New(Options{Agent: AgentFunc(func(v *View) Reply {
		return Reply{Text: "Reading the next file.", ToolUses: []ToolUse{{Name: "Read", Input: map[string]any{"file_path": "/src/x.go"}}}}
	})})
	defer s.Close()
	client := &http.Client{}
	lat := make([]time.Duration, 0, b.N)
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		resp, err := client.Post(s.URL()+path, "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("status %d", resp.StatusCode)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkMessagesStream replays the captured 51 KB main-loop request
// (streaming) against the fake.
func BenchmarkMessagesStream(b *testing.B) {
	benchRoundTrips(b, "/v1/messages?beta=true", loadCapture(b, "main-tools").Body)
}

// BenchmarkCountTokens counts the same body without the fields count_tokens
// rejects.
func BenchmarkCountTokens(b *testing.B) {
	body := loadCapture(b, "main-tools").Body
	p, err := parseRequest(body)
	if err != nil {
		b.Fatal(err)
	}
	for _, k := range []string{"max_tokens", "stream", "metadata"} {
		delete(p.fields, k)
	}
	benchRoundTrips(b, "/v1/messages/count_tokens", []byte(js(b, p.fields)))
}
