package learn

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode"

	"github.com/synaxi/synaxi/internal/profile"
)

// Extractor proposes observations for a session. Whatever it returns is
// still checked by Validate before anything is stored.
type Extractor interface {
	Name() string
	Extract(ctx context.Context, d *Doc, known []profile.Entry) ([]profile.Observation, error)
}

// Embedded is the default extractor: rules over the user's typed turns, no
// network, deterministic. It recognises corrections ("no, use…", "don't…",
// "stop…", "that's wrong…"), stated rules, preferences and conventions,
// approvals, self-descriptions of expertise, and repeated tool failures
// followed by the user stepping in; English first, with the commonest
// German, French and Spanish forms.
type Embedded struct{}

// Name is "embedded".
func (Embedded) Name() string { return "embedded" }

// Extract returns one observation per recognised sentence.
func (Embedded) Extract(_ context.Context, d *Doc, _ []profile.Entry) ([]profile.Observation, error) {
	var out []profile.Observation
	for i := range d.Turns {
		t := &d.Turns[i]
		ctxText := t.Before.Describe()
		ev := func(quote string) []profile.Evidence {
			return []profile.Evidence{{Session: d.Session, UUID: t.UUID, Timestamp: t.Timestamp, Quote: quote, Context: ctxText}}
		}
		sentences := Sentences(t.Text)
		found := false
		for _, s := range sentences {
			if o, ok := classify(s); ok && (o.Confidence > 0.4 || len(sentences) <= 3) {
				o.Evidence = ev(s)
				out = append(out, o)
				found = true
			}
		}
		// The assistant kept failing with the same tool and the user had
		// to step in: a weakness of the assistant, evidenced by the turn.
		if t.Before.Failures >= 3 && t.Before.FailingTool != "" && len(sentences) > 0 {
			out = append(out, profile.Observation{
				Dimension:  profile.AIFailures,
				Text:       fmt.Sprintf("kept retrying failing %s calls instead of stopping to rethink", t.Before.FailingTool),
				Confidence: 0.6, Evidence: ev(sentences[0]),
			})
		}
		// A bare approval right after an action says what the user wants
		// more of.
		if !found && len(sentences) == 1 && approvalRE.MatchString(sentences[0]) && len(sentences[0]) <= 40 && len(t.Before.Tools) > 0 {
			out = append(out, profile.Observation{
				Dimension:  profile.Expectations,
				Text:       "approves when the assistant " + coarse(t.Before.Tools[len(t.Before.Tools)-1]),
				Confidence: 0.4, Evidence: ev(sentences[0]),
			})
		}
		// A strong reaction right after an action is a trigger.
		if found && strongReaction(t.Text) && len(t.Before.Tools) > 0 && len(sentences) > 0 {
			out = append(out, profile.Observation{
				Dimension:  profile.Triggers,
				Text:       "reacts strongly when the assistant " + coarse(t.Before.Tools[len(t.Before.Tools)-1]),
				Confidence: 0.5, Evidence: ev(sentences[0]),
			})
		}
	}
	return out, nil
}

// Sentences splits a turn into trimmed sentences of at most 400 bytes
// (longer ones are dropped: a pasted log is not a preference).
func Sentences(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		start := 0
		for i := 0; i < len(line); i++ {
			c := line[i]
			if (c == '.' || c == '!' || c == '?' || c == ';') && (i+1 == len(line) || line[i+1] == ' ') {
				out = appendSentence(out, line[start:i+1])
				start = i + 1
			}
		}
		out = appendSentence(out, line[start:])
	}
	return out
}

func appendSentence(out []string, s string) []string {
	s = strings.TrimSpace(s)
	if len(s) < 3 || len(s) > 400 || !strings.ContainsFunc(s, unicode.IsLetter) {
		return out
	}
	return append(out, s)
}

var (
	// A correction opens the sentence.
	correctionRE = lazy(`(?i)^(no+[,.!:]|nope|nah[,. ]|wrong|incorrect|that'?s (wrong|not|incorrect)|that is (wrong|not)|not (that|like that|what i)|i (said|meant|asked)|undo|revert|why did you|you (shouldn'?t|should not|didn'?t|forgot)|stop|nein[,. ]|falsch|nicht so|non[,. ]|c'est faux|pas comme ça|eso (está|esta) mal)`)
	// A rule: always/never/don't…, anywhere it governs the sentence.
	ruleRE = lazy(`(?i)(^|\b)(never|always|don'?t|do not|stop|avoid|make sure|from now on|going forward|in the future|must|mustn'?t|immer|niemals|nie |bitte keine|toujours|jamais|siempre|nunca|no uses)\b`)
	// A stated preference or convention.
	preferRE = lazy(`(?i)\b(i (prefer|'?d prefer|like|'?d like|expect|hate|dislike)|we (use|always|never|prefer)|our (convention|style|standard)|convention is|prefer|instead of|rather than|by default|should (always|never|first)|we should|let'?s always|ich (möchte|will|bevorzuge)|je (préfère|veux)|prefiero)\b`)
	// Ordering of work: X before Y.
	beforeRE = lazy(`(?i)\b(before|first\b.*\bthen|after)\b`)
	// Autonomy: keep going until done.
	autonomyRE = lazy(`(?i)^(continue|keep going|carry on|proceed|don'?t stop)\b.*\b(until|without)\b`)
	approvalRE = lazy(`(?i)^(perfect|great|excellent|exactly|lgtm|looks good|nice|awesome|that works|works now|good job|well done|genau|parfait|perfecto)\b`)
	expertRE   = lazy(`(?i)\b(i'?m|i am) (a |an )?(senior |junior |staff |principal |lead )?([a-z+#-]+ )?(developer|engineer|programmer|architect|admin|sre|scientist)\b|\bi'?ve been (using|writing|working with)\b|\b(i'?m|i am) new to\b|\bi'?m not familiar with\b`)
	leadRE     = lazy(`^(no+|nope|nah|nein|non)[,.!:]?\s+`)
	questionRE = lazy(`\?\s*$`)
	hedgeRE    = lazy(`(?i)\b(maybe|perhaps|probably|might be|could be|i wonder|not sure|i guess|possibly|vielleicht|peut-être|quizás|tal vez)\b`)
	// A sentence that starts with an imperative verb.
	imperativeRE = lazy(`(?i)^(run|use|sign|commit|push|test|lint|format|install|rebase|keep)\b`)
)

// keyword sets that route an observation to a dimension.
var (
	codeStyleRE = lazy(`(?i)\b(indent\w*|tabs?|spaces|naming|camel ?case|snake_case|type hints?|comments?|docstrings?|variables?|functions?|error handling|early returns?|imports?|semicolons?|quotes|gofmt|prettier|black|eslint|style|idiomatic|readab\w+|helpers?|abstractions?)\b`)
	commsRE     = lazy(`(?i)\b(concise|brief|short(er)?|too long|verbose|explain\w*|summar\w+|emojis?|tone|answers?|respond\w*|reply|replies|language|in (english|german|french|spanish)|just the code|wordy|chatty)\b`)
	workflowRE  = lazy(`(?i)\b(commits?|committ\w*|push\w*|pull requests?|prs?|branch\w*|merge\w*|rebase|tests?|testing|ci|deploy\w*|release\w*|pre-commit|gitleaks|sign\w*|gpg|reviews?|builds?|lint\w*|npm|pnpm|yarn|docker|migrations?|investigate|plan\w*|worktrees?)\b`)
	valuesRE    = lazy(`(?i)\b(i care about|important to me|i value|security|privacy|simplicity|correctness|quality|performance matters)\b`)
)

// classify recognises one sentence.
func classify(s string) (profile.Observation, bool) {
	lower := strings.ToLower(s)
	if questionRE.MatchString(s) || hedgeRE.MatchString(s) {
		// A question or a hypothesis is not a fact about the user.
		return profile.Observation{}, false
	}
	text := strings.TrimRight(leadRE.ReplaceAllString(lower, ""), ".!; ")
	if text == "" {
		text = lower
	}
	switch {
	case ruleRE.MatchString(s) && len(strings.Fields(s)) >= 3:
		return profile.Observation{Dimension: profile.Guards, Text: text, Confidence: 0.7}, true
	case expertRE.MatchString(s):
		return profile.Observation{Dimension: profile.Expertise, Text: text, Confidence: 0.6}, true
	case autonomyRE.MatchString(s):
		return profile.Observation{Dimension: profile.Expectations, Text: text, Confidence: 0.5}, true
	case preferRE.MatchString(s), beforeRE.MatchString(s) && strings.Contains(lower, "should"):
		return profile.Observation{Dimension: route(s), Text: text, Confidence: 0.6}, true
	case correctionRE.MatchString(s) && len(strings.Fields(s)) >= 2:
		return profile.Observation{Dimension: profile.AIFailures, Text: text, Confidence: 0.7}, true
	case imperativeRE.MatchString(s) && workflowRE.MatchString(s):
		return profile.Observation{Dimension: profile.Workflow, Text: text, Confidence: 0.4}, true
	}
	return profile.Observation{}, false
}

// route picks the dimension of a preference by its vocabulary.
func route(s string) string {
	switch {
	case codeStyleRE.MatchString(s):
		return profile.CodeStyle
	case commsRE.MatchString(s):
		return profile.Communication
	case valuesRE.MatchString(s):
		return profile.Values
	case workflowRE.MatchString(s), beforeRE.MatchString(s):
		return profile.Workflow
	}
	return profile.Expectations
}

// setupCmd are shell commands that only prepare the one that follows.
var setupCmd = map[string]bool{"cd": true, "pushd": true, "export": true, "source": true, ".": true, "set": true, "true": true}

// wordRE is a command word safe to keep: a program or subcommand name, never
// an argument that could carry a host, path or secret.
var wordRE = lazy(`^[a-z][a-z0-9_.:]{0,30}$`)

var shoutRE = lazy(`\b(NO|STOP|WRONG|NEVER|WTF|DON'T)\b|!!`)

func strongReaction(s string) bool { return shoutRE.MatchString(s) }

// coarse turns "ran git push origin" into "runs git push" so the same kind
// of action matches across sessions.
func coarse(tool string) string {
	f := strings.Fields(tool)
	if len(f) == 0 {
		return tool
	}
	switch f[0] {
	case "ran":
		if len(f) >= 3 {
			return "runs " + f[1] + " " + f[2]
		}
		return "runs commands"
	case "edited":
		return "edits files"
	case "wrote":
		return "writes files"
	}
	return "uses " + f[0]
}

// describeTool is a coarse, secret-free description of a tool call.
func describeTool(name string, input json.RawMessage) string {
	switch name {
	case "Bash":
		var in struct {
			Command string `json:"command"`
		}
		_ = json.Unmarshal(input, &in)
		// The first command that does something: "cd repo && git
		// commit …" describes as git commit.
		var f []string
		for _, seg := range strings.FieldsFunc(in.Command, func(r rune) bool { return r == '&' || r == ';' || r == '|' || r == '\n' }) {
			f = strings.Fields(seg)
			if len(f) > 0 && !setupCmd[f[0]] {
				break
			}
		}
		var words []string
		for _, w := range f {
			if len(words) == 2 || !wordRE.MatchString(w) {
				break
			}
			words = append(words, w)
		}
		if len(words) == 0 {
			return "ran a shell command"
		}
		return "ran " + strings.Join(words, " ")
	case "Edit", "MultiEdit", "NotebookEdit":
		return "edited files"
	case "Write":
		return "wrote files"
	case "Read", "Glob", "Grep":
		return "read files"
	case "Task", "Agent":
		return "started a subagent"
	}
	if strings.HasPrefix(name, "Todo") || strings.HasPrefix(name, "Task") {
		return "" // bookkeeping, not an action the user reacts to
	}
	return "used " + name
}

// lazyRE compiles its pattern on first use: the hook binary links this
// package but never extracts, and compiling every rule at start-up cost it
// about 9 ms per SessionEnd.
type lazyRE struct {
	once sync.Once
	src  string
	re   *regexp.Regexp
}

func lazy(src string) *lazyRE { return &lazyRE{src: src} }

func (l *lazyRE) get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.src) })
	return l.re
}

func (l *lazyRE) MatchString(s string) bool { return l.get().MatchString(s) }

func (l *lazyRE) ReplaceAllString(s, repl string) string { return l.get().ReplaceAllString(s, repl) }
