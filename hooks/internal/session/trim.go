package session

import (
	"fmt"
	"time"

	"github.com/synaxi/synaxi/internal/hookio"
	"github.com/synaxi/synaxi/internal/trim"
	"github.com/synaxi/synaxi/internal/xdg"
)

// Trimmed is the context `synaxi trim` staged for this session's project
// (its cwd), taken, so it is given once: only when the main conversation
// starts after /clear. A start after resume, compact, startup or fork, and
// any subagent, leaves the stage alone; an expired stage is removed and
// nothing given. It returns the block for the model and a line for the
// user ("" and "" when nothing is carried).
func Trimmed(d xdg.Dirs, in *hookio.Input, now time.Time) (block, notice string, err error) {
	if in.Source != "clear" || in.AgentID != "" {
		return "", "", nil
	}
	st, err := trim.Take(d, in.Cwd, now)
	if err != nil || st == nil {
		return "", "", err
	}
	return st.Block, fmt.Sprintf("synaxi trim: this session starts with what session %s left open (about %d tokens).", st.Session, st.Tokens), nil
}
