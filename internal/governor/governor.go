// Package governor detects an agent stuck in a loop from the tool calls of
// one conversation context (a session's main agent, or one subagent). The
// no-reread hook feeds it every call as it happens, and an offline replay
// feeds it the calls of a transcript; both run this code and get the same
// fires.
//
// It is pure and deterministic: Observe reads one Call and the State built
// from the calls before it, and returns the fire the call completes, if any.
// State is plain JSON, so a hook process can keep it in a file between
// calls. It is bounded: keys are short hashes, the maps are cleared when
// they pass a cap, and edits are kept only for the last few changes.
//
// The rules (thresholds in Thresholds, chosen on the replay panel of
// docs/governor.md):
//
//   - repeat: the same command (whitespace collapsed) run Repeat times in a
//     row with the same output and no edit between. This is the no-reread
//     hook's loop breaker, whose alternating denial reads Runs.
//   - unchanged: the same command failing with the same output Unchanged
//     times in a row, edits between or not: the edits are not reaching it.
//   - revert: the same change undone Revert times: an edit that restores
//     text an earlier edit of the same file replaced (an Edit whose old and
//     new text swap an earlier one's, or a Write of content the file had
//     before the write that replaced it), counted per file and pair of
//     texts, so adding and then removing debug lines once does not count.
//   - reread: the same lines of a file read Reread times, giving the same
//     content, with no edit of it between.
//   - stall: StallCalls calls in a row that touch no file not touched
//     before, while the context grew by StallTokens; only where the caller
//     knows the context size (Call.Tokens: the hook reads it from the end
//     of the transcript, the replay from each request's usage).
//
// One call fires at most one rule, in the order above; each rule fires once
// per streak (when its count reaches the threshold), so a loop that goes on
// is not told twice by the same rule until something breaks the streak.
package governor

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Kind is what a tool call does, as far as loops go.
type Kind string

// Kinds of call.
const (
	Command Kind = "command" // a shell command line
	Read    Kind = "read"    // a file read (the Read tool, or a shell read)
	Edit    Kind = "edit"    // a file changed by an edit tool (Edit, MultiEdit, Write, NotebookEdit)
	Other   Kind = "other"   // anything else (search, web, tasks)
)

// Pair is one replacement of an Edit: Old replaced by New.
type Pair struct{ Old, New string }

// Call is one tool call and its result, classified by the caller.
type Call struct {
	Kind Kind
	// Command is the command line of a Command.
	Command string
	// Path is the file a Read or an Edit names, absolute when known.
	Path string
	// Lines are the lines a Read asked for ("" for the default view); part
	// of the reread key.
	Lines string
	// Pairs are an Edit's replacements; Whole is set for a Write, whose
	// content is Pairs[0].New.
	Pairs []Pair
	Whole bool
	// Edits are the files a Command may change, and EditsAny is set when it
	// may change files it does not name (git checkout, a formatter, a line
	// that does not parse).
	Edits    []string
	EditsAny bool
	// Failed is set when the result was an error (a non-zero exit, a tool
	// error); Output is the result text the model saw. Only its hash is kept.
	Failed bool
	Output string
	// Tokens is the size of the context when the call was made (the prompt
	// tokens of the request that issued it); 0 when unknown.
	Tokens int64
}

// Rule names a kind of loop.
type Rule string

// Rules, in the order they are checked.
const (
	Revert    Rule = "revert"
	Repeat    Rule = "repeat"
	Unchanged Rule = "unchanged"
	Reread    Rule = "reread"
	Stall     Rule = "stall"
)

// Rules lists every rule in check order.
var Rules = []Rule{Revert, Repeat, Unchanged, Reread, Stall}

// Thresholds are the counts at which each rule fires; 0 turns a rule off.
type Thresholds struct {
	Repeat      int
	Unchanged   int
	Revert      int
	Reread      int
	StallCalls  int
	StallTokens int64
}

// Defaults are the thresholds chosen on the replay panel (docs/governor.md).
var Defaults = Thresholds{Repeat: 3, Unchanged: 3, Revert: 2, Reread: 3, StallCalls: 60, StallTokens: 60000}

// Fire is a detected loop.
type Fire struct {
	Rule    Rule   `json:"rule"`
	Count   int    `json:"count"`             // runs, failures, reverts, reads or calls that made it fire
	Subject string `json:"subject,omitempty"` // the command or file, shortened
	Tokens  int64  `json:"tokens,omitempty"`  // stall: how much the context grew
}

// maxKeys bounds each map of the state; past it the map starts afresh,
// which at worst delays a fire.
const maxKeys = 512

// maxSwaps is how many recent edits are kept for the revert rule.
const maxSwaps = 32

// State is everything the rules remember of a context, as JSON.
type State struct {
	// Runs counts each command's runs in a row with the same output since
	// the last edit (repeat); Tries counts the loop breaker's attempts once
	// a command reached its threshold.
	Runs  map[string]Seen `json:"runs,omitempty"`
	Tries map[string]int  `json:"tries,omitempty"`
	// Fails counts, per command, its failures in a row with the same
	// output, edits between or not (unchanged).
	Fails map[string]Seen `json:"fails,omitempty"`
	// Reads counts reads of the same lines of a file, giving the same
	// content, since its last edit.
	Reads map[string]Seen `json:"reads,omitempty"`
	// Swaps are the last edits (revert); Reverts counts how often each
	// change (a file and a pair of texts) was undone.
	Swaps   []Swap         `json:"swaps,omitempty"`
	Reverts map[string]int `json:"reverts,omitempty"`
	// Touched holds every file read or edited; Quiet counts the calls since
	// one was new, Base is the context size then, Stalled that the stall
	// rule fired in this streak.
	Touched map[string]bool `json:"touched,omitempty"`
	Quiet   int             `json:"quiet,omitempty"`
	Base    int64           `json:"base,omitempty"`
	Stalled bool            `json:"stalled,omitempty"`
	// Held is a fire whose stop is still to be delivered (mode on): the
	// hook holds it until the next tool call, which it denies, stopping
	// Claude.
	Held *Fire `json:"held,omitempty"`
}

// Seen is a run of identical results: the hash of the output (settled,
// see Settle) and how many times in a row it came.
type Seen struct {
	Output string `json:"output"`
	Count  int    `json:"count"`
}

// see counts one more result of key k with output out in m: the run goes on
// when the output is the same, and starts afresh when it differs.
func see(m map[string]Seen, k, out string) (map[string]Seen, int) {
	if m == nil || (len(m) >= maxKeys && m[k].Count == 0) {
		m = map[string]Seen{}
	}
	r := m[k]
	if r.Output != out {
		r = Seen{Output: out}
	}
	r.Count++
	m[k] = r
	return m, r.Count
}

// Swap is one edit: the file and the hashes of the text replaced and the
// text that replaced it (Old empty for a Write).
type Swap struct {
	File string `json:"file"`
	Old  string `json:"old,omitempty"`
	New  string `json:"new"`
}

// Key is the key of a command: whitespace collapsed, hashed.
func Key(cmd string) string { return hash(Normalize(cmd)) }

// Normalize collapses a command's whitespace.
func Normalize(cmd string) string { return strings.Join(strings.Fields(cmd), " ") }

func hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}

// Observe folds one call into the state and returns the fire it completes.
func (s *State) Observe(c Call, th Thresholds) (Fire, bool) {
	var fires []Fire
	add := func(f Fire, ok bool) {
		if ok {
			fires = append(fires, f)
		}
	}
	edits := c.Kind == Edit || c.EditsAny || len(c.Edits) > 0
	if c.Kind == Edit {
		add(s.revert(c, th))
	}
	if edits {
		s.edited(c)
	}
	if c.Kind == Command && c.Command != "" {
		add(s.command(c, edits, th))
	}
	if c.Kind == Read && c.Path != "" {
		add(s.read(c, th))
	}
	add(s.stall(c, th))
	if len(fires) == 0 {
		return Fire{}, false
	}
	return fires[0], true
}

// edited forgets what an edit may have changed: every command's run count
// (a repeat after an edit is verification, not a loop) and the reads of the
// files it changed.
func (s *State) edited(c Call) {
	s.Runs, s.Tries = nil, nil
	switch {
	case c.EditsAny:
		s.Reads = nil
	case c.Kind == Edit:
		s.forgetReads(c.Path)
	default:
		for _, p := range c.Edits {
			s.forgetReads(p)
		}
	}
}

func (s *State) forgetReads(path string) {
	prefix := hash(path) + ":"
	for k := range s.Reads {
		if strings.HasPrefix(k, prefix) {
			delete(s.Reads, k)
		}
	}
}

// Attempt is the loop breaker's judgement of a command about to run: once
// it has run n times with no edit between, alternate attempts are denied.
// It returns whether to deny and how often the command ran.
func (s *State) Attempt(cmd string, n int) (deny bool, runs int) {
	k := Key(cmd)
	runs = s.Runs[k].Count
	if n <= 0 || runs < n {
		return false, runs
	}
	s.Tries = bump(s.Tries, k)
	return s.Tries[k]%2 == 1, runs
}

// Forget clears the command and read counts after a change the governor
// did not see (a file changed behind the agent's back, a compaction), and
// reports whether there was anything to clear.
func (s *State) Forget() bool {
	had := len(s.Runs)+len(s.Tries)+len(s.Reads) > 0
	s.Runs, s.Tries, s.Reads = nil, nil, nil
	return had
}

func bump(m map[string]int, k string) map[string]int {
	if m == nil || len(m) >= maxKeys {
		if _, ok := m[k]; !ok {
			m = map[string]int{}
		}
	}
	m[k]++
	return m
}
