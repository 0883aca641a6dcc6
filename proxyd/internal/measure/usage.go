// Package measure reads what the upstream billed from a response as it
// passes through, and asks the upstream's count_tokens what the original
// request would have cost (the counterfactual).
package measure

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"mime"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/synaxi/synaxi/internal/ledger"
	"github.com/synaxi/synaxi/proxyd/internal/sse"
)

// MaxCopy bounds the copy of a non-streaming or compressed response kept for
// reading usage; a larger response records unknown usage.
const MaxCopy = 64 << 20

// counts are the usage fields of one usage object; nil means absent.
type counts struct {
	input, cacheCreate, write5m, write1h, cacheRead, output *int64
}

func (c *counts) merge(u gjson.Result) {
	set := func(dst **int64, path string) {
		if v := u.Get(path); v.Exists() && v.Type == gjson.Number {
			n := v.Int()
			*dst = &n
		}
	}
	set(&c.input, "input_tokens")
	set(&c.cacheCreate, "cache_creation_input_tokens")
	set(&c.write5m, "cache_creation.ephemeral_5m_input_tokens")
	set(&c.write1h, "cache_creation.ephemeral_1h_input_tokens")
	set(&c.cacheRead, "cache_read_input_tokens")
	set(&c.output, "output_tokens")
}

func val(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// usage converts to the ledger's form. Cache writes without a TTL breakdown
// count as 5-minute writes (the default TTL); a breakdown that does not add
// up gives the remainder to 5 minutes as well.
func (c *counts) usage() ledger.Usage {
	u := ledger.Usage{
		Input:        val(c.input),
		CacheRead:    val(c.cacheRead),
		Output:       val(c.output),
		CacheWrite5m: val(c.write5m),
		CacheWrite1h: val(c.write1h),
	}
	if rest := val(c.cacheCreate) - u.CacheWrite5m - u.CacheWrite1h; rest > 0 {
		u.CacheWrite5m += rest
	}
	return u
}

// Result is what a Collector learned from a response.
type Result struct {
	Usage ledger.Usage
	// Known is false when the response carried no usage (an error, a cut
	// stream before message_start, an undecodable body).
	Known bool
	Model string
	// Problem says why usage is unknown or incomplete, or names an error the
	// stream or body reported; empty when all went well.
	Problem string
}

// Collector is an io.Writer fed with every response byte the client gets.
// It never fails and never blocks: parse trouble is recorded in the result.
type Collector struct {
	stream   bool
	encoding string
	parser   sse.Parser
	copy     bytes.Buffer
	tooBig   bool
	counts   counts
	sawUsage bool
	model    string
	problem  string
	ended    bool // message_stop seen
}

// NewCollector prepares for a response with the given Content-Type and
// Content-Encoding headers.
func NewCollector(contentType, contentEncoding string) *Collector {
	mt, _, _ := mime.ParseMediaType(contentType)
	c := &Collector{
		stream:   mt == "text/event-stream",
		encoding: strings.ToLower(strings.TrimSpace(contentEncoding)),
	}
	c.parser.OnEvent = c.onEvent
	return c
}

// Write records p. It always reports len(p), nil.
func (c *Collector) Write(p []byte) (int, error) {
	if c.live() {
		return c.parser.Write(p)
	}
	if c.tooBig {
		return len(p), nil
	}
	if c.copy.Len()+len(p) > MaxCopy {
		c.tooBig = true
		c.copy = bytes.Buffer{}
		return len(p), nil
	}
	c.copy.Write(p)
	return len(p), nil
}

// live reports whether events are parsed as they pass (an uncompressed
// stream) rather than from a copy at the end.
func (c *Collector) live() bool {
	return c.stream && (c.encoding == "" || c.encoding == "identity")
}

func (c *Collector) onEvent(e sse.Event) {
	switch e.Name {
	case "message_start":
		m := gjson.GetBytes(e.Data, "message")
		if s := m.Get("model").Str; s != "" {
			c.model = s
		}
		if u := m.Get("usage"); u.IsObject() {
			c.counts.merge(u)
			c.sawUsage = true
		}
	case "message_delta":
		// Cumulative: the last message_delta wins, field by field.
		if u := gjson.GetBytes(e.Data, "usage"); u.IsObject() {
			c.counts.merge(u)
			c.sawUsage = true
		}
	case "message_stop":
		c.ended = true
	case "error":
		c.problem = "stream error: " + gjson.GetBytes(e.Data, "error.type").String()
	}
}

// Result finishes collection. complete says whether the upstream body was
// read to its end.
func (c *Collector) Result(complete bool) Result {
	if !c.live() {
		c.finishCopy()
	}
	r := Result{Usage: c.counts.usage(), Known: c.sawUsage, Model: c.model, Problem: c.problem}
	switch {
	case r.Problem != "":
	case !complete:
		r.Problem = "response cut before its end"
	case c.stream && !c.ended && c.sawUsage:
		r.Problem = "stream ended without message_stop"
	case !c.sawUsage:
		r.Problem = "response carried no usage"
	}
	return r
}

func (c *Collector) finishCopy() {
	if c.tooBig {
		c.problem = fmt.Sprintf("response larger than %d bytes: usage not read", MaxCopy)
		return
	}
	body := c.copy.Bytes()
	switch c.encoding {
	case "", "identity":
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			c.problem = "gzip response: " + err.Error()
			return
		}
		plain, err := io.ReadAll(io.LimitReader(zr, MaxCopy))
		if err != nil && len(plain) == 0 {
			c.problem = "gzip response: " + err.Error()
			return
		}
		body = plain
	default:
		c.problem = "content-encoding " + c.encoding + ": usage not read"
		return
	}
	if c.stream {
		_, _ = c.parser.Write(body)
		return
	}
	if !gjson.ValidBytes(body) {
		c.problem = "response body is not JSON"
		return
	}
	if m := gjson.GetBytes(body, "model").Str; m != "" {
		c.model = m
	}
	if t := gjson.GetBytes(body, "type").Str; t == "error" {
		c.problem = "error response: " + gjson.GetBytes(body, "error.type").String()
	}
	if u := gjson.GetBytes(body, "usage"); u.IsObject() {
		c.counts.merge(u)
		c.sawUsage = true
	}
}
