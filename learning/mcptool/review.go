package mcptool

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/xdg"
	"github.com/synaxi/synaxi/learning/publish"
	"github.com/synaxi/synaxi/learning/review"
	"github.com/synaxi/synaxi/learning/store"
)

// Candidates renders the candidates waiting in project (with all, every
// project's) for the review_candidates tool: each with its id, where it
// would apply, any warning, and its quotes beside the assistant messages
// they answered, so the agent can put them to the user one at a time.
func Candidates(d xdg.Dirs, project string, all bool) (string, error) {
	if all {
		project = ""
	}
	l, err := review.Load(store.Open(store.Dir(d)), project)
	if err != nil {
		return "", fmt.Errorf("cannot read the learned profile: %v (run `synaxi profile history` and `synaxi profile rollback` to repair it)", err)
	}
	if len(l.Candidates) == 0 {
		return "No candidate waits for review (profile v" + fmt.Sprint(l.ProfileVersion) + ").\n", nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d candidate(s) wait for the user's decision (profile v%d). None is applied until the user accepts it. "+
		"Show each to the user with its quotes and ask: accept, accept in other words, make global, reject, or skip; "+
		"then call review_decide with the user's answer. Never decide for the user.\n", len(l.Candidates), l.ProfileVersion)
	for i, it := range l.Candidates {
		where := "project " + it.Project
		if it.Scope == store.ScopeGlobal {
			where = "every project"
		}
		fmt.Fprintf(&b, "\n%d. [%s] %s\n   %s, would apply in %s, from %d session(s)\n", i+1, it.ID, it.Rule, it.Dimension, where, it.Sessions)
		if it.Conflicts != nil {
			fmt.Fprintf(&b, "   contradicts the rule the user accepted: [%s] %s (accepting this one leaves that one as it is)\n", it.Conflicts.ID, store.Sentence(it.Conflicts.Text))
		}
		if it.Danger != "" {
			fmt.Fprintf(&b, "   WARNING: flagged dangerous (%s). Only the user can accept it, in a terminal: `synaxi profile review`.\n", it.Danger)
		}
		if len(it.AlsoIn) > 0 {
			fmt.Fprintf(&b, "   also learned in %s (making it global would cover them)\n", strings.Join(it.AlsoIn, ", "))
		}
		for j, q := range it.Quotes {
			if j == 3 {
				fmt.Fprintf(&b, "   (%d more quote(s))\n", len(it.Quotes)-3)
				break
			}
			if q.Answered != "" {
				fmt.Fprintf(&b, "   the assistant had said: %q\n", q.Answered)
			}
			fmt.Fprintf(&b, "   the user said: %q (session %s, %s)\n", q.Quote, q.Session, q.At.UTC().Format("2006-01-02 15:04"))
		}
	}
	return b.String(), nil
}

// Decide records the user's decision for the review_decide tool and
// publishes it. An agent may reject any candidate but not accept one
// flagged dangerous (review.ErrNeedsUser).
func Decide(ctx context.Context, d xdg.Dirs, getenv func(string) string, id, verdict, text string, global bool) (string, error) {
	l, err := config.Load(d.ConfigFile(), getenv)
	if err != nil {
		return "", fmt.Errorf("synaxi's configuration is broken: %v (fix %s)", err, d.ConfigFile())
	}
	switch verdict {
	case store.Accept, store.Reject:
	default:
		return "", fmt.Errorf("verdict %q: want accept or reject (skip needs no call)", verdict)
	}
	if verdict == store.Reject && (text != "" || global) {
		return "", fmt.Errorf("text and global go with accept, not reject")
	}
	v, err := review.Decide(store.Open(store.Dir(d)), id, store.Decision{Verdict: verdict, Text: text, Global: global}, true)
	switch {
	case errors.Is(err, store.ErrUnchanged):
		return fmt.Sprintf("[%s] was already accepted; nothing changed.\n", id), nil
	case errors.Is(err, store.ErrNotFound):
		return "", fmt.Errorf("no entry %s: call review_candidates for the current ids", id)
	case err != nil:
		return "", err
	}
	rep, perr := publish.Publish(ctx, d, l.Config.Guidance, getenv)
	what := map[string]string{store.Accept: "accepted: it applies from the next session on", store.Reject: "rejected: it is deleted and never learned again"}[verdict]
	if verdict == store.Accept && global {
		what = "accepted for every project: it applies from the next session on"
	}
	out := fmt.Sprintf("[%s] %s (profile v%d; `synaxi profile rollback` undoes it).\n", id, what, v)
	if perr != nil {
		out += fmt.Sprintf("Publishing failed: %v; the decision is saved and the next change publishes it.\n", perr)
	} else if rep != nil {
		for _, p := range rep.Problems {
			out += "Publication problem: " + p.String() + "\n"
		}
	}
	return out, nil
}
