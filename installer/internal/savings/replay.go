package savings

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"
)

// ReplaySchema is the version of `synaxi savings --replay --json`; fields
// are only ever added.
const ReplaySchema = 1

// ReplayOptions select and replay the user's recent sessions.
type ReplayOptions struct {
	Projects string // Claude Code's projects directory (<config dir>/projects)
	Sessions int    // the newest this many main sessions, each with its subagents
	Proxyd   string // the synaxi-proxyd to run `replay --json` with
	Env      []string
	// MaxBytes, when positive, leaves out transcripts larger than this
	// (named in ReplayReport.Skipped): the replay reads about 1.3 MB of
	// transcript per CPU second, so one huge session would hold up the
	// answer for minutes.
	MaxBytes int64
	// Progress, when set, receives a progress bar (a terminal).
	Progress io.Writer
	// Scope is the effective proxy.scope routing projects under: all (""),
	// worker or off. Only all projects the user's own sessions; under the
	// others there is nothing of theirs to price, and nothing is replayed.
	Scope string
}

// The verdicts of a replay: whether it priced routing, and if not, why.
const (
	Priced     = "priced"        // a figure worth quoting
	NoSessions = "no_sessions"   // no transcripts at all
	TooShort   = "too_short"     // no conversation long enough for the projection to engage
	TooLittle  = "too_little"    // engaged, but all of them together save under MinQuoted
	NotRouted  = "not_projected" // proxy.scope projects none of the user's own sessions
	Unreplayed = "not_replayed"  // every conversation failed or was left out (--max-mb)
)

// MinQuoted is the smallest billed-input reduction over all replayed
// conversations that the replay quotes as a figure: below it the
// projection has not had sessions long enough to pay, and a figure such
// as "1.01× less" would only invite routing for nothing.
const MinQuoted = 1.05

// Conversation is one replayed transcript: a session's main conversation
// or one of its subagents'.
type Conversation struct {
	Path     string `json:"path"`
	Name     string `json:"name"`
	Requests int    `json:"requests"`
	Engaged  int    `json:"engaged_requests"` // requests the projection changed; 0: not touched
	// The billed-equivalent input with and without the projection, and
	// their ratio (see `synaxi-proxyd replay`).
	BaselineBilled  float64 `json:"baseline_billed_equivalent"`
	ProjectedBilled float64 `json:"projected_billed_equivalent"`
	BilledReduction float64 `json:"billed_reduction"`
	// The same counting the re-reads a shorter context implies.
	WithRereads float64 `json:"billed_reduction_with_rereads"`
	// Had the conversation stopped after some request: the lowest ratio,
	// and how many stopping points cost more with the projection.
	WorstStop     float64 `json:"worst_stop_billed_reduction"`
	CostlierStops int     `json:"costlier_stops"`
	Err           string  `json:"error,omitempty"`   // why it could not be replayed
	Skipped       string  `json:"skipped,omitempty"` // why it was not replayed (ReplayOptions.MaxBytes)
	AsSent        string  `json:"as_sent,omitempty"` // why routing passes it as sent, unreplayed (a compaction summary)
}

// Spread is the median and worst of a column over the conversations the
// projection touched.
type Spread struct {
	Median float64 `json:"median"`
	Worst  float64 `json:"worst"`
	WorstN string  `json:"worst_conversation"`
}

// ReplayReport is what `synaxi savings --replay` shows.
type ReplayReport struct {
	Schema   int    `json:"schema"`
	Projects string `json:"projects_dir"`
	Scope    string `json:"scope"`   // the proxy.scope the sessions were priced under
	Verdict  string `json:"verdict"` // Priced, or why not: NoSessions, TooShort, TooLittle, NotRouted, Unreplayed
	// NoProjects is set when the projects directory does not exist.
	NoProjects    bool            `json:"no_projects_dir,omitempty"`
	Sessions      int             `json:"sessions"`
	Conversations []*Conversation `json:"conversations"`
	Touched       int             `json:"touched"`
	Untouched     []string        `json:"untouched"` // names, served as sent
	Failed        []string        `json:"failed"`    // names, see Conversation.Err
	Skipped       []string        `json:"skipped"`   // names, see Conversation.Skipped
	// Over the touched conversations.
	Billed      *Spread `json:"billed_reduction,omitempty"`
	WithRereads *Spread `json:"billed_reduction_with_rereads,omitempty"`
	WorstStop   *Spread `json:"worst_stop_billed_reduction,omitempty"`
	// Over every replayed conversation.
	BaselineBilled  float64 `json:"baseline_billed_equivalent"`
	ProjectedBilled float64 `json:"projected_billed_equivalent"`
}

// ErrNoSessions and ErrNoProjects report a home with no Claude Code
// session to replay (ErrNoProjects: not even the projects directory).
var (
	ErrNoSessions = errors.New("no Claude Code sessions")
	ErrNoProjects = fmt.Errorf("%w yet", ErrNoSessions)
)

// RecentSessions lists the newest n main-session transcripts under
// projects (<project>/<session>.jsonl), newest first, and with each the
// subagent transcripts of that session (<project>/<session>/subagents/).
func RecentSessions(projects string, n int) (sessions int, paths []string, err error) {
	mains, err := filepath.Glob(filepath.Join(projects, "*", "*.jsonl"))
	if err != nil {
		return 0, nil, err
	}
	mtime := map[string]time.Time{}
	mains = slices.DeleteFunc(mains, func(p string) bool {
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() || strings.HasPrefix(filepath.Base(p), "agent-") {
			return true
		}
		mtime[p] = fi.ModTime()
		return false
	})
	if len(mains) == 0 {
		if _, err := os.Stat(projects); errors.Is(err, fs.ErrNotExist) {
			return 0, nil, fmt.Errorf("%w: %s does not exist (is Claude Code's config elsewhere? set CLAUDE_CONFIG_DIR)", ErrNoProjects, projects)
		}
		return 0, nil, fmt.Errorf("%w in %s (its <project>/<session>.jsonl files)", ErrNoSessions, projects)
	}
	sort.SliceStable(mains, func(i, j int) bool { return mtime[mains[i]].After(mtime[mains[j]]) })
	if n > 0 && len(mains) > n {
		mains = mains[:n]
	}
	for _, m := range mains {
		paths = append(paths, m)
		subs, _ := filepath.Glob(filepath.Join(strings.TrimSuffix(m, ".jsonl"), "subagents", "*.jsonl"))
		sort.Strings(subs)
		paths = append(paths, subs...)
	}
	return len(mains), paths, nil
}

// Replay runs `synaxi-proxyd replay --json --scope all` over each of the user's recent
// transcripts, one process each (so a progress bar can follow), and folds
// the results. A transcript that fails is reported, not fatal.
//
// It replays nothing when routing would project none of the user's own
// sessions (Scope worker or off), and with no sessions reports so in its
// verdict rather than failing: set-up then says to come back later.
func Replay(ctx context.Context, o ReplayOptions) (*ReplayReport, error) {
	scope := o.Scope
	if scope == "" {
		scope = "all"
	}
	rep := &ReplayReport{Schema: ReplaySchema, Projects: o.Projects, Scope: scope}
	if scope != "all" {
		rep.Verdict = NotRouted
		rep.fold()
		return rep, nil
	}
	n, paths, err := RecentSessions(o.Projects, o.Sessions)
	if errors.Is(err, ErrNoSessions) {
		rep.NoProjects = errors.Is(err, ErrNoProjects)
		rep.fold()
		return rep, nil
	}
	if err != nil {
		return nil, err
	}
	rep.Sessions = n
	var bar *progressbar.ProgressBar
	if o.Progress != nil {
		var total int64
		for _, p := range paths {
			if fi, err := os.Stat(p); err == nil {
				total += fi.Size()
			}
		}
		bar = progressbar.NewOptions64(total, progressbar.OptionSetWriter(o.Progress),
			progressbar.OptionSetDescription("replay"),
			progressbar.OptionSetPredictTime(true), progressbar.OptionClearOnFinish(),
			progressbar.OptionThrottle(100*time.Millisecond))
	}
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var c *Conversation
		if fi, err := os.Stat(p); isCompaction(p) {
			c = &Conversation{Path: p, Name: conversationName(p), AsSent: "a compaction summary: routing passes it upstream as sent"}
		} else if err == nil && o.MaxBytes > 0 && fi.Size() > o.MaxBytes {
			c = &Conversation{Path: p, Name: conversationName(p),
				Skipped: fmt.Sprintf("%.1f MB, over the %.0f MB limit (--max-mb)", float64(fi.Size())/(1<<20), float64(o.MaxBytes)/(1<<20))}
		} else {
			c = replayOne(ctx, o, p)
		}
		rep.Conversations = append(rep.Conversations, c)
		if bar != nil {
			if fi, err := os.Stat(p); err == nil {
				_ = bar.Add64(fi.Size())
			}
		}
	}
	if bar != nil {
		_ = bar.Finish()
	}
	rep.fold()
	return rep, nil
}

// isCompaction reports whether path is the transcript of Claude Code's
// compaction agent (subagents/agent-acompact-*.jsonl): the summary request
// it makes passes through a routed proxy untouched.
func isCompaction(path string) bool {
	return filepath.Base(filepath.Dir(path)) == "subagents" && strings.HasPrefix(filepath.Base(path), "agent-acompact")
}

// replayed is the part of `synaxi-proxyd replay --json` (schema 1) shown.
type replayed struct {
	Schema   int `json:"schema"`
	Requests int `json:"requests"`
	Baseline struct {
		Billed float64 `json:"billed_equivalent"`
	} `json:"baseline"`
	Projected struct {
		Billed float64 `json:"billed_equivalent"`
	} `json:"projected"`
	BilledReduction float64 `json:"billed_reduction"`
	WithRereads     float64 `json:"billed_reduction_with_rereads"`
	Engaged         int     `json:"engaged_requests"`
	WorstStop       float64 `json:"worst_stop_billed_reduction"`
	CostlierStops   int     `json:"costlier_stops"`
}

func replayOne(ctx context.Context, o ReplayOptions, path string) *Conversation {
	c := &Conversation{Path: path, Name: conversationName(path)}
	cmd := exec.CommandContext(ctx, o.Proxyd, "replay", "--json", "--scope", cmp.Or(o.Scope, "all"), path)
	cmd.Env = o.Env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		c.Err = firstLine(msg)
		return c
	}
	var r replayed
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		c.Err = fmt.Sprintf("%s replay printed no report: %v", o.Proxyd, err)
		return c
	}
	if r.Schema != 1 {
		c.Err = fmt.Sprintf("%s replay printed schema %d; this synaxi reads schema 1", o.Proxyd, r.Schema)
		return c
	}
	c.Requests, c.Engaged = r.Requests, r.Engaged
	c.BaselineBilled, c.ProjectedBilled = r.Baseline.Billed, r.Projected.Billed
	c.BilledReduction, c.WithRereads = r.BilledReduction, r.WithRereads
	c.WorstStop, c.CostlierStops = r.WorstStop, r.CostlierStops
	return c
}

// fold computes the totals, the spreads over touched conversations, and
// the lists of untouched and failed ones.
func (r *ReplayReport) fold() {
	r.Untouched, r.Failed, r.Skipped = []string{}, []string{}, []string{}
	var touched []*Conversation
	for _, c := range r.Conversations {
		switch {
		case c.Skipped != "":
			r.Skipped = append(r.Skipped, c.Name)
			continue
		case c.AsSent != "":
			r.Untouched = append(r.Untouched, c.Name)
			continue
		case c.Err != "":
			r.Failed = append(r.Failed, c.Name)
			continue
		case c.Engaged == 0:
			r.Untouched = append(r.Untouched, c.Name)
		default:
			touched = append(touched, c)
		}
		r.BaselineBilled += c.BaselineBilled
		r.ProjectedBilled += c.ProjectedBilled
	}
	r.Touched = len(touched)
	switch {
	case r.Verdict == NotRouted:
	case r.Sessions == 0:
		r.Verdict = NoSessions
	case len(r.Failed)+len(r.Skipped) == len(r.Conversations):
		r.Verdict = Unreplayed
	case len(touched) == 0:
		r.Verdict = TooShort
	case r.BaselineBilled/max(r.ProjectedBilled, 1) < MinQuoted:
		r.Verdict = TooLittle
	default:
		r.Verdict = Priced
	}
	if len(touched) == 0 {
		return
	}
	r.Billed = spread(touched, func(c *Conversation) float64 { return c.BilledReduction })
	r.WithRereads = spread(touched, func(c *Conversation) float64 { return c.WithRereads })
	r.WorstStop = spread(touched, func(c *Conversation) float64 { return c.WorstStop })
}

// spread is the median and the lowest (worst) of col over cs.
func spread(cs []*Conversation, col func(*Conversation) float64) *Spread {
	s := slices.Clone(cs)
	sort.SliceStable(s, func(i, j int) bool { return col(s[i]) < col(s[j]) })
	n := len(s)
	med := col(s[n/2])
	if n%2 == 0 {
		med = (col(s[n/2-1]) + col(s[n/2])) / 2
	}
	return &Spread{Median: med, Worst: col(s[0]), WorstN: s[0].Name}
}

// conversationName names a transcript by its session's first eight
// characters, and a subagent's by that and its file name.
func conversationName(path string) string {
	base := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	if dir := filepath.Dir(path); filepath.Base(dir) == "subagents" {
		return short(filepath.Base(filepath.Dir(dir))) + "/" + base
	}
	return short(base)
}

func short(s string) string {
	if len(s) > 8 {
		return s[:8]
	}
	return s
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// WriteJSON writes the report as JSON (schema ReplaySchema).
func (r *ReplayReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes what a user reads before deciding to route: a figure
// only when the verdict is Priced; otherwise why there is none yet, and to
// use synaxi for a while and ask again.
func (r *ReplayReport) WriteText(w io.Writer) error {
	switch r.Verdict {
	case NotRouted:
		_, err := fmt.Fprintf(w, "Nothing of yours to price: proxy.scope is %s, so routing projects %s, and your sessions go upstream as sent.\n"+
			"Set proxy.scope = \"all\" (the default) to have routing project your own sessions, then run `synaxi savings --replay` again.\n",
			r.Scope, scopeWhat(r.Scope))
		return err
	case NoSessions:
		where := "in " + r.Projects
		if r.NoProjects {
			where = "yet: " + r.Projects + " does not exist (if Claude Code keeps its config elsewhere, set CLAUDE_CONFIG_DIR)"
		}
		_, err := fmt.Fprintf(w, "Too little history to price routing: no Claude Code sessions %s.\n%s", where, comeBack)
		return err
	}
	if r.Verdict == Priced {
		fmt.Fprintf(w, "What routing would have saved on your %d most recent Claude Code %s\n", r.Sessions, plural(r.Sessions, "session", "sessions"))
	} else {
		fmt.Fprintf(w, "Your %d most recent Claude Code %s\n", r.Sessions, plural(r.Sessions, "session", "sessions"))
	}
	fmt.Fprintf(w, "(%d %s from %s, replayed as routing treats them: proxy.scope = all projects the main session and every subagent where the cost model pays; billed-equivalent input, cache-aware)\n",
		len(r.Conversations), plural(len(r.Conversations), "conversation", "conversations"), r.Projects)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if r.Verdict == Priced {
		fmt.Fprintln(tw)
		fmt.Fprintf(tw, "touched\t%d of %d conversations\n", r.Touched, len(r.Conversations))
		fmt.Fprintf(tw, "median\t%s less billed input\t(%s counting the re-reads a shorter context costs)\n", times(r.Billed.Median), times(r.WithRereads.Median))
		fmt.Fprintf(tw, "worst\t%s\t(%s; with re-reads %s, %s)\n", lessOrMore(r.Billed.Worst), r.Billed.WorstN, lessOrMore(r.WithRereads.Worst), r.WithRereads.WorstN)
		fmt.Fprintf(tw, "stopped early\t%s at worst\t(%s, had it ended at its costliest point)\n", lessOrMore(r.WorstStop.Worst), r.WorstStop.WorstN)
		fmt.Fprintf(tw, "all of them\t%s → %s billed-equivalent input tokens\t(%s)\n", tokens(r.BaselineBilled), tokens(r.ProjectedBilled), lessOrMore(r.BaselineBilled/max(r.ProjectedBilled, 1)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.Untouched) > 0 {
		fmt.Fprintf(w, "\nnot touched (%d; too short for the projection to pay, or compaction summaries: served as sent): %s\n", len(r.Untouched), strings.Join(r.Untouched, ", "))
	}
	for _, c := range r.Conversations {
		switch {
		case c.Skipped != "":
			fmt.Fprintf(w, "not replayed %s: %s\n", c.Name, c.Skipped)
		case c.Err != "":
			fmt.Fprintf(w, "could not replay %s: %s\n", c.Name, c.Err)
		}
	}
	switch r.Verdict {
	case TooShort:
		what := fmt.Sprintf("none of these %d conversations is", len(r.Conversations))
		if len(r.Conversations) == 1 {
			what = "this conversation is not"
		}
		_, err := fmt.Fprintf(w, "\nToo little history to price routing: %s long enough for the projection to engage (it pays on long sessions).\n%s",
			what, comeBack)
		return err
	case Unreplayed:
		_, err := fmt.Fprintln(w, "\nNo figure: no conversation could be replayed (see above).")
		return err
	case TooLittle:
		_, err := fmt.Fprintf(w, "\nToo little history to price routing: on these sessions the projection would change the billed input by less than %.0f%%; it pays on long sessions.\n%s",
			100*(1-1/MinQuoted), comeBack)
		return err
	}
	_, err := fmt.Fprintln(w, "\nOnce routed, every Claude Code session is projected the same way where the cost model predicts it pays; side requests (titles, quota probes, token counts) go upstream as sent.")
	return err
}

// comeBack is what the replay says when it has no figure to quote.
const comeBack = "Use Claude Code with synaxi for a while (a few long sessions), then ask again: `synaxi savings --replay`, or /synaxi:setup.\n"

// scopeWhat says what routing projects under a scope other than all.
func scopeWhat(scope string) string {
	if scope == "worker" {
		return "only the synaxi-worker agent's requests"
	}
	return "nothing"
}

func times(x float64) string { return fmt.Sprintf("%.2f×", x) }

// tokens formats a token count: 950, 41.2k, 3.1M.
func tokens(x float64) string {
	switch {
	case x >= 1e6:
		return fmt.Sprintf("%.1fM", x/1e6)
	case x >= 1e3:
		return fmt.Sprintf("%.1fk", x/1e3)
	}
	return fmt.Sprintf("%.0f", x)
}

// lessOrMore says a ratio in words: above 1 is less billed input.
func lessOrMore(x float64) string {
	if x >= 1 {
		return times(x) + " less"
	}
	return fmt.Sprintf("%.0f%% more", 100*(1/x-1)) // the projection cost more
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
