package projection

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/proxyd/internal/gate"
	"github.com/synaxi/synaxi/proxyd/internal/projection/validate"
)

// foldOf folds a conversation the way the engine does for one request
// and returns the fold's state.
func foldOf(t *testing.T, cfg Config, msgs []obj) *fold {
	t.Helper()
	in := gate.Parse(reqBody(msgs))
	req := parseRequest(in)
	raws, err := splitMessages(req.messages)
	require.NoError(t, err)
	r := cfg.resolve(Window(req.model.String(), ""))
	r.fit(req, projectSystem(req.system), cfg.roster())
	f, _, err := New(cfg).fold(r, raws)
	require.NoError(t, err)
	return f
}

// TestBudgetCountsWhatAGenerationServes: the size the budget, the working
// set and eviction count for an entry is what it adds to a generation, its
// call as well as its result. Commands with long command lines and short
// output make the call most of it.
func TestBudgetCountsWhatAGenerationServes(t *testing.T) {
	msgs := []obj{user(text("Check the fixtures."))}
	for i := range 120 {
		id := fmt.Sprintf("toolu_%03d", i)
		cmd := fmt.Sprintf("python3 -c \"import json; print(len(json.load(open('fixture_%02d.json'))))\" %s", i, strings.Repeat("--verbose ", 20))
		msgs = append(msgs, bashPair(id, cmd, fmt.Sprint(i))...)
	}
	f := foldOf(t, Config{AlwaysEngage: true, BudgetTokens: 3000}, msgs)
	require.NotEmpty(t, f.gens, "the conversation was re-projected")
	for i, g := range f.gens {
		calls, sum := 0, 0
		for _, e := range g.list {
			sum += e.size()
			calls += e.useTokens
		}
		notes := 0
		for _, m := range g.msgs {
			for j, k := range m.kinds {
				if k == "text" {
					notes += f.cfg.tok(stringOf(m.blocks[j]))
				}
			}
		}
		assert.Equal(t, g.tokens, sum+notes, "generation %d: served tokens are its entries' sizes and its notes", i)
		assert.Greater(t, calls, sum/2, "generation %d: the calls are most of it", i)
	}
}

// TestEmptyCutIsNotChosen: a cut whose rebuild would keep no entry (the
// old generation fills the target and nothing was used in the last two
// turns) is not chosen however much its account holds, since the rebuild
// would fall back to the goal's cut and write everything after it; the
// goal's cut is chosen only when its own account pays for that.
func TestEmptyCutIsNotChosen(t *testing.T) {
	f := newFold(Config{}.resolve(200_000))
	f.reprojections = 1
	f.gens = []gen{{tokens: 9000}}
	f.acc = []float64{1000, 50_000}
	est := []cutEstimate{{kept: 400, rebuilt: 6000}, {kept: 9400, rebuilt: 0}}
	assert.Equal(t, -1, f.chooseCut(20_000, 100, est), "the empty cut is skipped, the goal's cut does not pay yet")
	f.acc[0] = 50_000
	assert.Equal(t, 0, f.chooseCut(20_000, 100, est), "the goal's cut pays on its own account")
	est[1].rebuilt = 500
	assert.Equal(t, 1, f.chooseCut(20_000, 100, est), "a cut that keeps an entry is an option")
}

// TestClip: a call quoted in a note is its first line, at most n bytes,
// never cut inside a character, and a cut is marked.
func TestClip(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"go test ./...", 20, "go test ./..."},
		{"python3 -c \"\nimport json\"", 20, "python3 -c \"…"},
		{strings.Repeat("a", 12), 10, "aaaaaaaaaa…"},
		{"aaaaaaaaé", 10, "aaaaaaaaé"},
		{"aaaaaaaaaé", 10, "aaaaaaaaa…"}, // é is 2 bytes: cutting at 10 would split it
	} {
		assert.Equal(t, c.want, clip(c.in, c.n), "clip(%q, %d)", c.in, c.n)
	}
}

// TestEngagementHoldsTheRecentWorkingSet: until the projection engages,
// the working set is what the last engageSteps turns used; from then on,
// what the last workingSteps turns used.
func TestEngagementHoldsTheRecentWorkingSet(t *testing.T) {
	f := newFold(Config{}.resolve(200_000))
	f.step = 20
	for i := range 8 {
		e := &entry{key: fmt.Sprintf("/w/f%d.go", i), tool: "Read", input: jsonObject("file_path", fmt.Sprintf("/w/f%d.go", i)), content: jsonString(strings.Repeat("x", 4000))}
		f.world.put(e, f.step-i) // used 0..7 turns ago
	}
	within := func(turns int) int {
		n := 0
		for i := range turns {
			n += f.world.entries[fmt.Sprintf("/w/f%d.go", i)].size()
		}
		return n
	}
	require.Greater(t, within(4), f.cfg.target*floorTenths/10, "four entries are above the floor")
	require.Less(t, within(8), f.cfg.target*capTenths/10, "eight entries are below the cap")
	assert.Equal(t, within(4), f.target(), "before engaging: the last 4 turns")
	f.reprojections = 1
	assert.Equal(t, within(8), f.target(), "engaged: the last 8 turns")
	est := f.estimates()
	f.reprojections = 0
	assert.Less(t, f.estimates()[0].rebuilt, est[0].rebuilt, "the engagement's estimate keeps the smaller set")
}

// TestNoRebuildBelowTheCacheMinimum: a cut whose rebuilt context would be
// too short for the model's prompt cache is not chosen, whatever its
// account holds, even when it would write the least; one above the
// minimum (with cacheMargin) is.
func TestNoRebuildBelowTheCacheMinimum(t *testing.T) {
	f := newFold(Config{}.resolve(200_000))
	f.cfg.minCache, f.cfg.overhead = 4096, 2000
	f.reprojections = 1
	f.gens = []gen{{tokens: 1500}}
	f.acc = []float64{50_000, 50_000}
	est := []cutEstimate{{kept: 400, rebuilt: 2000}, {kept: 1900, rebuilt: 900}}
	assert.Equal(t, -1, f.chooseCut(20_000, 100, est), "4,400 and 4,800 tokens: both under 1.25 × 4,096")
	f.cfg.minCache = 1024
	assert.Equal(t, 1, f.chooseCut(20_000, 100, est), "a 1,024-token minimum: the cut that writes least")
	f.cfg.minCache = 4096
	est[0].rebuilt = 3000
	assert.Equal(t, 0, f.chooseCut(20_000, 100, est), "5,400 tokens from the goal's cut: cacheable, the later cut still is not")
	est[1].rebuilt = 1300
	assert.Equal(t, 1, f.chooseCut(20_000, 100, est), "5,200 tokens: cacheable, and it writes less")
}

// TestCeilingCountsWhatARebuildFolds: the hard ceiling forces a rebuild
// when what a rebuild can fold (the snapshot and the tail) is over it, not
// when the part every rebuild keeps is: a conversation whose first message
// alone is over the ceiling (a large paste) is not rebuilt at every turn.
func TestCeilingCountsWhatARebuildFolds(t *testing.T) {
	paste := strings.Repeat("a log line the user pasted, kept whole in every request\n", 4000) // ~56K tokens
	msgs := []obj{user(text("Look at this log:\n" + paste))}
	for i := range 60 {
		id := fmt.Sprintf("toolu_%02d", i)
		msgs = append(msgs, readPair(id, fmt.Sprintf("/w/f%02d.go", i), fileLines(id, 30))...)
	}
	eng := New(Config{AlwaysEngage: true, BudgetTokens: 4000}) // a 40,000-token ceiling
	rebuilds, requests := 0, 0
	for n := 3; n <= len(msgs); n += 2 {
		r, err := eng.ProjectBody(context.Background(), reqBody(msgs[:n]), "")
		require.NoError(t, err)
		require.NoError(t, validate.Request(r.Body))
		requests++
		if r.Reprojected {
			rebuilds++
		}
		require.Contains(t, string(r.Body), "kept whole in every request", "the paste is served")
	}
	t.Logf("%d rebuilds in %d requests", rebuilds, requests)
	assert.LessOrEqual(t, rebuilds, requests/6, "rebuilt only when the cost model finds it pays")
}
