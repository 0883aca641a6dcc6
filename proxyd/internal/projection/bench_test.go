package projection

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/synaxi/synaxi/internal/tokens"
	"github.com/synaxi/synaxi/proxyd/internal/gate"
	"github.com/synaxi/synaxi/proxyd/internal/gcpolicy"
)

// benchConversation is a 300-message worker conversation of about 200K
// tokens: reads of 60 files, commands and edits.
func benchConversation() []obj {
	r := rand.New(rand.NewPCG(1, 2))
	msgs := []obj{user(text("Survey the modules and fix the failing tests.")),
		{"role": "system", "content": "# Environment\n - Primary working directory: /w"}}
	for i := 0; len(msgs) < 300; i++ {
		id := fmt.Sprintf("toolu_%04d", i)
		var lines []string
		for j := range 62 {
			lines = append(lines, fmt.Sprintf("func f%d_%d(x int) int { return x*%d + %d } // %s", i, j, j, r.IntN(1000), strings.Repeat("c", r.IntN(20))))
		}
		switch i % 3 {
		case 0, 1:
			msgs = append(msgs, assistant(toolUse(id, "Read", obj{"file_path": fmt.Sprintf("/w/m%02d.go", i%60)})), user(toolResult(id, numbered(lines), false)))
		default:
			msgs = append(msgs, assistant(text("Running the tests."), toolUse(id, "Bash", obj{"command": fmt.Sprintf("go test ./m%02d", i%60)})),
				user(toolResult(id, strings.Join(lines[:30], "\n"), i%5 == 0)))
		}
	}
	return msgs
}

// BenchmarkProjectWarm is a running proxy's cost per request: the
// conversation's previous request (298 messages) was projected, and the
// 300-message, ~200K-token request arrives.
func BenchmarkProjectWarm(b *testing.B) {
	gcpolicy.Apply() // as synaxi-proxyd runs
	msgs := benchConversation()
	prev, body := reqBody(msgs[:len(msgs)-2]), reqBody(msgs)
	b.ReportMetric(float64(tokens.EstimateBytes(body)), "input-tokens")
	benchProject(b, func() *Engine {
		eng := New(Config{AlwaysEngage: true})
		if _, err := eng.ProjectBody(context.Background(), prev, ""); err != nil {
			b.Fatal(err)
		}
		return eng
	}, body)
}

// BenchmarkProjectCold is the cost after a proxy restart: nothing
// memoised, the whole conversation is folded.
func BenchmarkProjectCold(b *testing.B) {
	gcpolicy.Apply() // as synaxi-proxyd runs
	body := reqBody(benchConversation())
	benchProject(b, func() *Engine { return New(Config{AlwaysEngage: true}) }, body)
}

func benchProject(b *testing.B, setup func() *Engine, body []byte) {
	ctx := context.Background()
	var durs []time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		eng := setup()
		b.StartTimer()
		// As the server calls it: the body parsed once by the gate (not
		// copied), its validation started beside the projection.
		start := time.Now()
		in := &gate.Input{Body: gate.Parse(body)}
		in.Body.Check()
		if _, err := eng.Project(ctx, in); err != nil {
			b.Fatal(err)
		}
		durs = append(durs, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(durs)
	b.ReportMetric(float64(durs[len(durs)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(durs[len(durs)*99/100].Microseconds())/1000, "p99-ms")
}
