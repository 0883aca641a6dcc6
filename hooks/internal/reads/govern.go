package reads

import (
	"path/filepath"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/synaxi/synaxi/internal/governor"
	"github.com/synaxi/synaxi/internal/hookio"
	"github.com/synaxi/synaxi/internal/ledger"
	"github.com/synaxi/synaxi/internal/transcript"

	"github.com/synaxi/synaxi/hooks/internal/shellread"
)

// governorName is the context's governor state (governor.State), which
// also holds the loop breaker's counts.
const governorName = "governor.json"

// Thresholds are the governor's thresholds with the repeat rule's taken
// from noreread.loop_threshold.
func (s *Store) Thresholds() governor.Thresholds {
	th := governor.Defaults
	th.Repeat = s.Cfg.LoopThreshold
	return th
}

// Govern feeds a finished tool call (PostToolUse, or PostToolUseFailure)
// to its context's governor and returns the loop it completed, if any, after
// counting it for the status line. With governor.mode off it does nothing.
func (s *Store) Govern(in *hookio.Input) (governor.Fire, bool, error) {
	if s.Mode == governor.Off || s.Mode == "" || in.SessionID == "" {
		return governor.Fire{}, false, nil
	}
	failed, output := toolResult(in)
	c := governor.FromTool(in.ToolName, []byte(in.ToolInput.Raw), in.Cwd, failed, output, ShellEdits)
	c.Tokens = contextTokens(in)
	var (
		fire governor.Fire
		ok   bool
	)
	file := filepath.Join(Dir(s.Dirs, in.SessionID, in.AgentID), governorName)
	err := updateGovernor(file, true, func(st *governor.State) bool {
		fire, ok = st.Observe(c, s.Thresholds())
		if ok && s.Mode == governor.On {
			st.Held = &fire
		}
		return true
	})
	if err != nil || !ok {
		return fire, ok, err
	}
	return fire, ok, s.count(in.SessionID, func(c *ledger.Counters) {
		if c.Loops == nil {
			c.Loops = map[string]int64{}
		}
		c.Loops[string(fire.Rule)]++
		if s.Mode == governor.On {
			c.Stops++
		}
		c.LastLoop = &ledger.LoopFire{Rule: string(fire.Rule), Subject: fire.Subject, Count: fire.Count,
			Mode: string(s.Mode), Agent: in.AgentID, At: s.Now()}
	})
}

// contextTokens is the prompt size of the request that issued the call,
// read from the end of the context's transcript (a subagent's own file
// beside the session's); 0 when it cannot be read, which leaves the stall
// rule off for the call.
func contextTokens(in *hookio.Input) int64 {
	path := in.TranscriptPath
	if path == "" {
		return 0
	}
	if in.AgentID != "" {
		path = filepath.Join(strings.TrimSuffix(path, ".jsonl"), "subagents", "agent-"+in.AgentID+".jsonl")
	}
	n, err := transcript.LastPromptTokens(path)
	if err != nil {
		return 0
	}
	return n
}

// toolResult is whether a finished call failed and the output the model saw
// of it: PostToolUseFailure's error, a Read's content, or a Bash call's
// stdout and stderr.
func toolResult(in *hookio.Input) (failed bool, output string) {
	if in.HookEventName == "PostToolUseFailure" {
		return true, in.ToolError
	}
	r := in.ToolResponse
	if in.ToolName == "Read" {
		return false, r.Get("file.content").Str
	}
	out := r.Get("stdout").Str
	if e := r.Get("stderr").Str; e != "" {
		out += "\n" + e
	}
	return r.Get("is_error").Bool() || r.Get("interrupted").Bool(), out
}

// ShellEdits is the governor's view of a command line: the files it may
// change and whether it may change files it does not name.
func ShellEdits(cmd, cwd string) ([]string, bool) {
	an := shellread.Parse(cmd, cwd)
	var edits []string
	for _, e := range an.Edits {
		if p := absPath(e, cwd); p != "" {
			edits = append(edits, p)
		}
	}
	return edits, an.Global
}

// preHeld delivers a stop the governor holds (mode on): Claude Code ignores
// continue false from PostToolUse and PostToolUseFailure (checked with the
// real CLI, e2e TestGovernorOnRealClient), so the stop waits for the next
// tool call, which is denied with the directive while Claude is stopped.
func (s *Store) preHeld(in *hookio.Input) (Decision, error) {
	if s.Mode != governor.On {
		return Decision{}, nil
	}
	file := filepath.Join(Dir(s.Dirs, in.SessionID, in.AgentID), governorName)
	if data, err := readGovernorBytes(file); err != nil || !gjson.GetBytes(data, "held").IsObject() {
		return Decision{}, nil
	}
	var dec Decision
	err := updateGovernor(file, false, func(st *governor.State) bool {
		if st.Held == nil {
			return false
		}
		dec = Decision{Deny: true, Reason: st.Held.Directive(), Stop: st.Held.StopReason()}
		st.Held = nil
		return true
	})
	return dec, err
}

// preLoop is the loop breaker: a command that already ran loop_threshold
// times with no edit in between is denied on alternate attempts
// (governor.State.Attempt).
func (s *Store) preLoop(in *hookio.Input, cmd string) (Decision, error) {
	n := s.Cfg.LoopThreshold
	if n <= 0 || s.Mode == governor.Off || s.Mode == "" || strings.TrimSpace(cmd) == "" {
		return Decision{}, nil
	}
	file := filepath.Join(Dir(s.Dirs, in.SessionID, in.AgentID), governorName)
	// The command's runs, looked up without decoding the whole state (the
	// key is hex); a file that does not parse gives 0: no loop.
	if data, err := readGovernorBytes(file); err != nil || gjson.GetBytes(data, "runs."+governor.Key(cmd)+".count").Int() < int64(n) {
		return Decision{}, nil // none, unreadable (the next post replaces it), or no loop
	}
	var dec Decision
	err := updateGovernor(file, false, func(st *governor.State) bool {
		deny, runs := st.Attempt(cmd, n)
		if runs < n {
			return false
		}
		if deny {
			f := governor.Fire{Rule: governor.Repeat, Count: runs, Subject: governor.Normalize(cmd)}
			dec = Decision{Deny: true, Reason: f.Directive() + " Re-issuing it once more is allowed."}
		}
		return true
	})
	if err != nil || !dec.Deny {
		return dec, err
	}
	return dec, ledger.AddCounts(s.Dirs, in.SessionID, ledger.Counts{LoopsBroken: 1})
}

// resetLoops clears the loop breaker's counts after a change the governor
// did not see (a file changed behind the agent's back, compaction): a
// repeat then is verification, not a loop.
func resetLoops(dir string) error {
	return updateGovernor(filepath.Join(dir, governorName), false, (*governor.State).Forget)
}
