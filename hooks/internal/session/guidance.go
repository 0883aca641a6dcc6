package session

import (
	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/hookio"
	"github.com/synaxi/synaxi/internal/xdg"
	"github.com/synaxi/synaxi/learning/publish"
)

// Guidance is what a starting session is told of the guidance synaxi
// learned from earlier sessions (for the repository root of its cwd, plus
// global entries), as SessionStart additional context within
// guidance.max_chars; "" when there is none or guidance.session_start is
// off. A resumed session already has it in its transcript and gets
// nothing; startup, clear and compact (which rebuild the context) get it.
// Nothing is written.
func Guidance(d xdg.Dirs, cfg config.Guidance, in *hookio.Input) (string, error) {
	if in.Source == "resume" {
		return "", nil
	}
	return publish.ForSession(d, cfg, in.Cwd)
}

// SubagentGuidance is the same guidance for a subagent that starts (the
// hook's matcher picks which: the synaxi-worker, which writes the code the
// guards are about). Its cwd decides the project.
func SubagentGuidance(d xdg.Dirs, cfg config.Guidance, in *hookio.Input) (string, error) {
	return publish.ForSession(d, cfg, in.Cwd)
}
