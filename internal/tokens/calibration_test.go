package tokens

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/transcript"
)

var (
	update    = flag.Bool("update", false, "regenerate testdata/api-requests.jsonl.gz from the shared API traffic fixture")
	calibrate = flag.Bool("calibrate", false, "fit the coefficients to the measurements and print them")
	trafficIn = flag.String("traffic", "../../../shared/fixtures/anthropic-api-traffic/claude-trace-test-traffic.jsonl", "API traffic fixture read by -update (shared/ beside the checkout)")
)

const (
	requestsFile   = "testdata/api-requests.jsonl.gz"
	sessionFixture = "../transcript/testdata/claude-code-sessions/258c7280-ae70-4798-800f-63464d01a85d.jsonl"
)

// sample is one measurement: the features of some content and the tokens
// the API counted for it.
type sample struct {
	name   string
	f      Features
	tokens float64
	bytes  int // size of the JSON the features came from, for the bytes/4 baseline
}

// apiRequest is one line of testdata/api-requests.jsonl.gz: a real request
// body and the prompt tokens (input + cache read + cache write) its response
// reported.
type apiRequest struct {
	Model        string          `json:"model"`
	PromptTokens int64           `json:"prompt_tokens"`
	Body         json.RawMessage `json:"body"`
}

// TestUpdateRequests derives testdata/api-requests.jsonl.gz from the shared
// traffic fixture (github.com/badlogic/lemmy, MIT): every request whose
// response reports usage, in file order, with the body byte-for-byte.
func TestUpdateRequests(t *testing.T) {
	if !*update {
		t.Skip("run with -update to regenerate")
	}
	in, err := os.ReadFile(*trafficIn)
	require.NoError(t, err)
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	n := 0
	for line := range bytes.Lines(in) {
		var pair struct {
			Request struct {
				URL  string          `json:"url"`
				Body json.RawMessage `json:"body"`
			} `json:"request"`
			Response struct {
				Body    json.RawMessage `json:"body"`
				BodyRaw string          `json:"body_raw"`
			} `json:"response"`
		}
		require.NoError(t, json.Unmarshal(line, &pair))
		if !strings.Contains(pair.Request.URL, "/v1/messages") || strings.Contains(pair.Request.URL, "count_tokens") {
			continue
		}
		usage, ok := responseUsage(pair.Response.Body, pair.Response.BodyRaw)
		if !ok {
			continue
		}
		var body struct {
			Model string `json:"model"`
		}
		require.NoError(t, json.Unmarshal(pair.Request.Body, &body))
		rec, err := json.Marshal(apiRequest{Model: body.Model, PromptTokens: usage.PromptTokens(), Body: pair.Request.Body})
		require.NoError(t, err)
		zw.Write(append(rec, '\n'))
		n++
	}
	require.NoError(t, zw.Close())
	require.NoError(t, os.WriteFile(requestsFile, out.Bytes(), 0o644))
	t.Logf("wrote %d requests", n)
}

// responseUsage finds the usage of a JSON response or of an SSE stream's
// message_start event.
func responseUsage(body json.RawMessage, sse string) (*transcript.Usage, bool) {
	var msg struct {
		Usage   *transcript.Usage `json:"usage"`
		Message struct {
			Usage *transcript.Usage `json:"usage"`
		} `json:"message"`
	}
	if json.Unmarshal(body, &msg) == nil && msg.Usage != nil {
		return msg.Usage, true
	}
	for line := range strings.Lines(sse) {
		data, ok := strings.CutPrefix(strings.TrimSpace(line), "data:")
		if !ok || !strings.Contains(data, `"message_start"`) {
			continue
		}
		if json.Unmarshal([]byte(data), &msg) == nil && msg.Message.Usage != nil {
			return msg.Message.Usage, true
		}
	}
	return nil, false
}

// requestSamples are whole request bodies against their prompt tokens.
func requestSamples(t *testing.T) []sample {
	f, err := os.Open(requestsFile)
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	var out []sample
	seen := map[string]bool{}
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var r apiRequest
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r))
		if seen[string(r.Body)] {
			continue // the same body again (Claude Code's quota probe) would weigh more
		}
		seen[string(r.Body)] = true
		feat, ok := CountJSON(r.Body)
		require.True(t, ok)
		out = append(out, sample{name: fmt.Sprintf("request %d (%s)", len(out)+1, r.Model), f: feat, tokens: float64(r.PromptTokens), bytes: len(r.Body)})
	}
	require.NoError(t, sc.Err())
	return out
}

// call is one API call of the session: its prompt size and what it added
// to the conversation (its own content blocks and the user blocks after it).
type call struct {
	id       string
	prompt   int64
	blocks   [][]byte // assistant blocks
	user     [][]byte // user blocks that followed
	thinking bool
	boundary bool // a compaction came between this call and the next
}

// sessionSamples measure the growth of the real session's prompt between
// consecutive main-chain API calls against the features of what was added:
// the assistant message of the first call and the user message after it.
// Pairs that span a compaction, contain thinking (whose billed size is not
// the stored summary), or follow a human turn (Claude Code adds context we
// cannot see) are left out.
func sessionSamples(t *testing.T) []sample {
	var recs []*transcript.Record
	rd, err := transcript.Open(sessionFixture)
	require.NoError(t, err)
	defer rd.Close()
	for {
		r, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		recs = append(recs, r)
	}
	var calls []*call
	var cur *call
	human := false
	for _, r := range recs {
		switch {
		case r.IsSidechain:
			continue
		case r.Type == transcript.TypeSystem && r.Subtype == "compact_boundary":
			if cur != nil {
				cur.boundary = true
			}
		case r.Type == transcript.TypeAssistant && r.Message != nil:
			if cur == nil || cur.id != r.Message.ID {
				if cur != nil && human {
					cur.boundary = true
				}
				human = false
				cur = &call{id: r.Message.ID}
				calls = append(calls, cur)
			}
			cur.prompt = r.Message.Usage.PromptTokens()
			for _, b := range r.Message.Blocks() {
				if b.Type == "thinking" || b.Type == "redacted_thinking" {
					cur.thinking = true
				}
				cur.blocks = append(cur.blocks, b.Raw)
			}
		case r.Type == transcript.TypeUser && r.Message != nil && cur != nil:
			if _, typed := transcript.HumanText(r); typed || r.IsCompactSummary || r.IsMeta {
				human = true
			}
			for _, b := range r.Message.Blocks() {
				cur.user = append(cur.user, b.Raw)
			}
		}
	}
	var out []sample
	for i := 0; i+1 < len(calls); i++ {
		c, next := calls[i], calls[i+1]
		grow := next.prompt - c.prompt
		if c.boundary || c.thinking || len(c.user) == 0 || grow <= 0 {
			continue
		}
		body := fmt.Sprintf(`{"messages":[{"role":"assistant","content":[%s]},{"role":"user","content":[%s]}]}`,
			bytes.Join(c.blocks, []byte(",")), bytes.Join(c.user, []byte(",")))
		feat, ok := CountJSON([]byte(body))
		require.True(t, ok, body)
		feat.Requests = 0
		var names []string
		edit := false
		for _, b := range c.blocks {
			var x struct{ Type, Name string }
			_ = json.Unmarshal(b, &x)
			if x.Type == "tool_use" {
				names = append(names, x.Name)
				edit = edit || x.Name == "Edit"
			}
		}
		if edit {
			continue // the session's PostToolUse:Edit hook added context the transcript does not store
		}
		out = append(out, sample{name: "session call " + c.id + " " + strings.Join(names, "+"), f: feat, tokens: float64(grow), bytes: len(body)})
	}
	return out
}

// errorStats summarises the relative errors of coefficients c on samples.
type errorStats struct {
	n                       int
	median, p90, max, total float64 // |relative error|; total is the signed error of the sums
}

func measure(c Coefficients, samples []sample) errorStats {
	return measureFunc(samples, func(s sample) float64 { return float64(c.Apply(s.f)) })
}

func measureFunc(samples []sample, estimate func(sample) float64) errorStats {
	var errs []float64
	var est, real float64
	for _, s := range samples {
		e := estimate(s)
		errs = append(errs, math.Abs(e-s.tokens)/s.tokens)
		est += e
		real += s.tokens
	}
	slices.Sort(errs)
	q := func(p float64) float64 { return errs[int(math.Ceil(p*float64(len(errs))))-1] }
	return errorStats{n: len(errs), median: q(0.5), p90: q(0.9), max: errs[len(errs)-1], total: (est - real) / real}
}

func (e errorStats) String() string {
	return fmt.Sprintf("n=%d median=%.1f%% p90=%.1f%% max=%.1f%% sum=%+.1f%%",
		e.n, 100*e.median, 100*e.p90, 100*e.max, 100*e.total)
}

// TestAccuracy pins the measured error of the calibrated coefficients on
// the real measurements. The bounds are the measured figures (see the
// package README section) with a little headroom; a change to the method
// that makes the estimate worse fails here.
func TestAccuracy(t *testing.T) {
	req := measure(Calibrated, requestSamples(t))
	sess := measure(Calibrated, sessionSamples(t))
	t.Logf("API request bodies: %s", req)
	t.Logf("session prompt growth: %s", sess)
	quarter := func(s sample) float64 { return float64(s.bytes) / 4 }
	t.Logf("baseline bytes/4: requests %s; session %s",
		measureFunc(requestSamples(t), quarter), measureFunc(sessionSamples(t), quarter))
	assert.Equal(t, 44, req.n)
	assert.Less(t, req.median, 0.03)
	assert.Less(t, req.p90, 0.12)
	assert.Less(t, math.Abs(req.total), 0.02)
	assert.Equal(t, 100, sess.n)
	assert.Less(t, sess.median, 0.07)
	assert.Less(t, sess.p90, 0.18)
	assert.Less(t, math.Abs(sess.total), 0.02)
}

// TestCalibrate fits the coefficients to all measurements by least squares
// on relative error and prints them with their error.
func TestCalibrate(t *testing.T) {
	if !*calibrate {
		t.Skip("run with -calibrate")
	}
	req, sess := requestSamples(t), sessionSamples(t)
	all := append(slices.Clone(req), sess...)
	fixed := map[int]float64{12: Calibrated.Image} // no images in the measurements
	w := fit(all, fixed)
	c := CoefficientsFrom(w)
	t.Logf("fitted: %#v", c)
	for name, set := range map[string][]sample{"requests only": req, "session only": sess} {
		o := CoefficientsFrom(fit(set, fixed))
		t.Logf("%s: %#v\n  requests %s; session %s", name, o, measure(o, req), measure(o, sess))
	}
	t.Logf("API request bodies: %s", measure(c, req))
	t.Logf("session prompt growth: %s", measure(c, sess))
	// Two-fold cross-validation: fit on every other sample, measure on the rest.
	var even, odd []sample
	for i, s := range all {
		if i%2 == 0 {
			even = append(even, s)
		} else {
			odd = append(odd, s)
		}
	}
	t.Logf("2-fold held-out: fit on even, odd %s; fit on odd, even %s",
		measure(CoefficientsFrom(fit(even, fixed)), odd), measure(CoefficientsFrom(fit(odd, fixed)), even))
	t.Logf("current: requests %s; session %s", measure(Calibrated, req), measure(Calibrated, sess))
	for _, s := range all {
		e := float64(c.Apply(s.f))
		if math.Abs(e-s.tokens)/s.tokens > 0.3 {
			t.Logf("outlier %s: real %.0f estimated %.0f", s.name, s.tokens, e)
		}
	}
}

// fit solves min Σ ((x·w − y)/y)² with w ≥ 0, holding the fixed indices at
// their values: ordinary least squares on the normal equations, refitted
// with every negative coefficient pinned to zero until none is negative.
func fit(samples []sample, fixed map[int]float64) []float64 {
	k := len(samples[0].f.Vector())
	pinned := map[int]float64{}
	for i, v := range fixed {
		pinned[i] = v
	}
	for {
		var free []int
		for i := range k {
			if _, ok := pinned[i]; !ok {
				free = append(free, i)
			}
		}
		n := len(free)
		a := make([][]float64, n)
		for i := range a {
			a[i] = make([]float64, n+1)
		}
		for _, s := range samples {
			x := s.f.Vector()
			y := s.tokens
			for i, v := range pinned {
				y -= x[i] * v
			}
			for r, i := range free {
				for c, j := range free {
					a[r][c] += x[i] * x[j] / (s.tokens * s.tokens)
				}
				a[r][n] += x[i] * y / (s.tokens * s.tokens)
			}
		}
		for r := range n {
			a[r][r] += 1e-9 // features absent from the data get 0
		}
		sol := solve(a)
		w := make([]float64, k)
		for i, v := range pinned {
			w[i] = v
		}
		neg := false
		for r, i := range free {
			w[i] = sol[r]
			if sol[r] < 0 {
				pinned[i] = 0
				neg = true
			}
		}
		if !neg {
			return w
		}
	}
}

// solve runs Gauss-Jordan elimination with partial pivoting on the
// augmented matrix a.
func solve(a [][]float64) []float64 {
	n := len(a)
	for c := range n {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[p][c]) {
				p = r
			}
		}
		a[c], a[p] = a[p], a[c]
		if a[c][c] == 0 {
			continue
		}
		for r := range n {
			if r == c {
				continue
			}
			m := a[r][c] / a[c][c]
			for j := c; j <= n; j++ {
				a[r][j] -= m * a[c][j]
			}
		}
	}
	x := make([]float64, n)
	for i := range n {
		if a[i][i] != 0 {
			x[i] = a[i][n] / a[i][i]
		}
	}
	return x
}

func TestFixtureFilesExist(t *testing.T) {
	for _, p := range []string{requestsFile, sessionFixture} {
		_, err := os.Stat(filepath.FromSlash(p))
		require.NoError(t, err, "%s: see calibration_test.go", p)
	}
}
