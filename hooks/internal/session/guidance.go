package session

import (
	"errors"
	"time"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/hookio"
	"github.com/synaxi/synaxi/internal/xdg"
	"github.com/synaxi/synaxi/learning/publish"
	"github.com/synaxi/synaxi/learning/review"
	"github.com/synaxi/synaxi/learning/store"
)

// Guidance is what a starting session is told of the guidance synaxi
// learned from earlier sessions (for the repository root of its cwd, plus
// global entries, confirmed ones only), as SessionStart additional context
// within guidance.max_chars; "" when there is none or
// guidance.session_start is off. A resumed session already has it in its
// transcript and gets nothing; startup, clear and compact (which rebuild
// the context) get it. When candidates that apply in the project wait for
// the user's review, notice is one line saying how many, for the user to
// see (the caller shows it as the hook's systemMessage) and the model
// (review.Notice: at most once a day per project, never their text); that
// is the only state written.
func Guidance(d xdg.Dirs, cfg config.Guidance, in *hookio.Input, now time.Time) (guide, notice string, err error) {
	if in.Source == "resume" {
		return "", "", nil
	}
	guide, err = publish.ForSession(d, cfg, in.Cwd)
	if !cfg.SessionStart {
		return guide, "", err
	}
	notice, nerr := review.Notice(d, store.ProjectRoot(in.Cwd), now)
	return guide, notice, errors.Join(err, nerr)
}

// SubagentGuidance is the same guidance for a subagent that starts (the
// hook's matcher picks which: the synaxi-worker, which writes the code the
// guards are about). Its cwd decides the project.
func SubagentGuidance(d xdg.Dirs, cfg config.Guidance, in *hookio.Input) (string, error) {
	return publish.ForSession(d, cfg, in.Cwd)
}
