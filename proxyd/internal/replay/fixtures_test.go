package replay

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/proxyd/internal/projection"
)

// allFixtureDirs are every transcript directory of shared/fixtures, the
// panel of scripts/bench.d/projection-panel.sh: the four sessions of one
// repository with their subagents, m-claude, the five sessions of five
// more users, and the learning set's sessions.
func allFixtureDirs(sessions string) []string {
	learning := filepath.Join(filepath.Dir(sessions), "learning")
	return []string{sessions, filepath.Join(sessions, "m-claude"),
		filepath.Join(sessions, "nicholas-wood-pai-claude"), filepath.Join(sessions, "windtara0619-tpu-inference"),
		filepath.Join(sessions, "natori-hrj-dotfiles"), filepath.Join(sessions, "obra-episodic-memory"),
		filepath.Join(sessions, "OpenAgentsInc-openagents"),
		filepath.Join(learning, "Durban-Designer-vsla"), filepath.Join(learning, "moredip-session-share"),
		filepath.Join(learning, "pai-procrypto"), filepath.Join(learning, "pai-smartagent")}
}

// TestFixturesNothingUserTypedHidden replays every transcript of the
// fixtures with every conversation projected (scope all, as routing
// projects them) and holds SPEC's invariant for a person in the loop:
// every user-typed message, image, command or skill expansion is in every
// later request (user_typed_hidden 0); and every request is valid, and
// the projection, every recovery the referee prices counted, bills no
// more than the baseline.
func TestFixturesNothingUserTypedHidden(t *testing.T) {
	if testing.Short() {
		t.Skip("replays every fixture transcript")
	}
	paths, err := Transcripts(allFixtureDirs(sharedSessions(t)))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(paths), 24, "every fixture transcript")
	for _, p := range paths {
		rep, err := Run(context.Background(), p, Options{Scope: config.ScopeAll, Projection: projection.FromConfig(config.Default().Projection)}, nil)
		require.NoError(t, err, p)
		name := ShortName(p)
		t.Logf("%s: %d requests, %d engaged, billed %.2fx, with recovery %.2fx, bound %.2fx, hidden then needed %+v",
			name, rep.Requests, rep.Engaged, rep.BilledReduction, rep.BilledReductionWithRecovery, rep.BoundReduction, rep.Projected.HiddenThenNeeded)
		assert.Zero(t, rep.Projected.UserTypedHidden, "%s: user-typed content hidden, first: %q", name, rep.Projected.FirstUserTypedHidden)
		assert.Zero(t, rep.Projected.InvalidRequests, "%s: %s", name, rep.Projected.FirstInvalid)
		assert.True(t, rep.NeverCostlier, "%s: costlier than without synaxi, recoveries priced (%.2fx)", name, rep.BilledReductionWithRecovery)
	}
}
