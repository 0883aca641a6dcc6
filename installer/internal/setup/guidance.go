package setup

import (
	"fmt"

	"github.com/synaxi/synaxi/internal/hint"
	"github.com/synaxi/synaxi/learning/publish"
)

// retractGuidance removes every section of learned guidance synaxi wrote
// into the user's project files (AGENTS.md, Cursor, Copilot, Gemini) and
// the narratives the SessionStart hook serves, exactly as the publication
// journal lists them. A section the user edited since is left in place
// with a warning. The profile itself is kept.
func (in *installer) retractGuidance() {
	rep, err := publish.Retract(in.dirs)
	if err != nil {
		in.warn(hint.Wrap(fmt.Errorf("retract published guidance: %w", err), "remove synaxi's marked sections by hand; the journal is "+publish.JournalPath(in.dirs)))
		return
	}
	for _, p := range rep.Changed {
		in.say("guidance: removed synaxi's section from %s", p)
	}
	for _, p := range rep.Problems {
		in.warn(fmt.Errorf("guidance: %s", p))
	}
}
