package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/synaxi/synaxi/learning/queue"
	"github.com/synaxi/synaxi/learning/screen"
	"github.com/synaxi/synaxi/learning/store"
)

// ProfileUsage is the help of `synaxi profile`.
const ProfileUsage = `usage: synaxi profile <command>

  review [--json] [--project DIR]
                         decide about what synaxi learned: accept, edit, reject, skip or make global,
                         each with its quote and the assistant message it answered (--json: list them)
  accept [--global] ID [TEXT…]
                         publish a candidate from now on (in your words with TEXT; everywhere with --global)
  reject ID              drop a candidate; it is never learned again
  show [--project DIR]   the entries that apply in DIR (default: every entry), heaviest first, with a quote each
  export [--json]        every entry with all its evidence (Markdown, or JSON with --json)
  history                every saved version
  rollback [VERSION]     make VERSION (default: the one before the current) current again, as a new version
  edit ID TEXT…          put an entry in your own words (its evidence stays)
  forget ID              delete an entry; the same observation is not learned again
  exclude ID             keep an entry but publish it nowhere
  include ID             undo exclude
  reset                  empty the profile (a new version; rollback undoes it)
`

// Show prints the entries, grouped by scope, heaviest first.
func Show(e Env, project string) error {
	p, err := e.store().Load()
	if err != nil {
		return err
	}
	entries := p.Entries
	if project != "" {
		entries = p.ForProject(project)
	} else {
		entries = append([]store.Entry(nil), entries...)
		store.SortEntries(entries)
	}
	if len(entries) == 0 {
		fmt.Fprintf(e.Out, "profile v%d: nothing learned yet (sessions are learned from when they end; `synaxi ingest --all` reads past ones)\n", p.Version)
		return nil
	}
	fmt.Fprintf(e.Out, "profile v%d, %d entries, %d sessions learned from\n\n", p.Version, len(entries), len(p.Ingested))
	tw := tabwriter.NewWriter(e.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSCOPE\tDIMENSION\tWEIGHT\tSESSIONS\tTEXT")
	for _, en := range entries {
		scope := en.Scope
		if en.Scope == store.ScopeProject {
			scope = en.Project
		}
		if en.State == store.Candidate {
			scope += " (candidate)"
		}
		if en.Danger() != "" {
			scope += " (flagged)"
		}
		if en.Excluded {
			scope += " (excluded)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.2f\t%d\t%s\n", en.ID, scope, en.Dimension, en.Weight, en.Count, en.Text)
		if n := len(en.Evidence); n > 0 {
			ev := en.Evidence[n-1]
			fmt.Fprintf(tw, "\t\t\t\t\t  “%s” (session %s, %s)\n", oneLine(ev.Quote), ev.Session, ev.Timestamp.Format("2006-01-02"))
		}
	}
	return tw.Flush()
}

// lastLine is the last line of a small log file ("" if none).
func lastLine(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const tail = 4096
	if fi, err := f.Stat(); err == nil && fi.Size() > tail {
		_, _ = f.Seek(fi.Size()-tail, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return lines[len(lines)-1]
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 160 {
		s = s[:157] + "…"
	}
	return s
}

// Export is the document `synaxi profile export --json` prints.
type Export struct {
	Version int           `json:"version"`
	Saved   time.Time     `json:"saved"`
	Entries []store.Entry `json:"entries"`
}

// ExportProfile prints every entry with all its evidence.
func ExportProfile(e Env, asJSON bool) error {
	p, err := e.store().Load()
	if err != nil {
		return err
	}
	entries := append([]store.Entry{}, p.Entries...)
	store.SortEntries(entries)
	if asJSON {
		enc := json.NewEncoder(e.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(Export{Version: p.Version, Saved: p.Saved, Entries: entries})
	}
	fmt.Fprintf(e.Out, "# synaxi profile v%d\n", p.Version)
	for _, en := range entries {
		where := "global"
		if en.Scope == store.ScopeProject {
			where = "project " + en.Project
		}
		ex := ", " + en.State
		if en.Danger() != "" {
			ex += ", flagged dangerous: " + en.Danger()
		}
		if en.Excluded {
			ex += ", excluded"
		}
		fmt.Fprintf(e.Out, "\n## %s: %s\n\n%s, %s, weight %.2f, %d session(s)%s, first %s, last %s\n\n", en.ID, en.Text, en.Dimension, where,
			en.Weight, en.Count, ex, en.FirstSeen.Format("2006-01-02"), en.LastSeen.Format("2006-01-02"))
		for _, ev := range en.Evidence {
			ctx := ""
			if ev.Context != "" {
				ctx = " (" + ev.Context + ")"
			}
			fmt.Fprintf(e.Out, "- “%s”%s — session %s, message %s, %s\n", oneLine(ev.Quote), ctx, ev.Session, ev.UUID, ev.Timestamp.Format(time.RFC3339))
		}
	}
	return nil
}

// History prints every saved version.
func History(e Env) error {
	vs, err := e.store().Versions()
	if err != nil {
		return err
	}
	if len(vs) == 0 {
		fmt.Fprintln(e.Out, "no profile versions yet")
		return nil
	}
	tw := tabwriter.NewWriter(e.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "VERSION\tSAVED\tENTRIES\tCHANGE")
	for _, v := range vs {
		cur := ""
		if v.Current {
			cur = " (current)"
		}
		fmt.Fprintf(tw, "v%d%s\t%s\t%d\t%s\n", v.Version, cur, v.Saved.Local().Format("2006-01-02 15:04:05"), v.Entries, v.Reason)
	}
	return tw.Flush()
}

// Change runs one mutating profile command (rollback, edit, forget,
// exclude, include, reset) and publishes afterwards.
func Change(ctx context.Context, e Env, cmd string, args []string) error {
	s := e.store()
	var v int
	var err error
	arg := func() (string, error) {
		if len(args) != 1 {
			return "", fmt.Errorf("%w: synaxi profile %s ID (ids are in `synaxi profile show`)", ErrUsage, cmd)
		}
		return args[0], nil
	}
	switch cmd {
	case "rollback":
		target := 0
		if len(args) > 1 {
			return fmt.Errorf("%w: synaxi profile rollback [VERSION]", ErrUsage)
		}
		if len(args) == 1 {
			target, err = strconv.Atoi(strings.TrimPrefix(args[0], "v"))
			if err != nil || target < 1 {
				return fmt.Errorf("%w: VERSION is a number from `synaxi profile history`, not %q", ErrUsage, args[0])
			}
		}
		v, err = s.Rollback(target)
	case "forget", "exclude", "include":
		id, aerr := arg()
		if aerr != nil {
			return aerr
		}
		switch cmd {
		case "forget":
			v, err = s.Forget(id)
		case "exclude":
			v, err = s.Exclude(id)
		default:
			v, err = s.Include(id)
		}
	case "edit":
		if len(args) < 2 {
			return fmt.Errorf("%w: synaxi profile edit ID NEW TEXT… (ids are in `synaxi profile show`)", ErrUsage)
		}
		v, err = s.Edit(args[0], strings.Join(args[1:], " "))
	case "reset":
		if len(args) != 0 {
			return fmt.Errorf("%w: synaxi profile reset", ErrUsage)
		}
		v, err = s.Reset()
	default:
		return fmt.Errorf("%w: unknown profile command %q", ErrUsage, cmd)
	}
	if errors.Is(err, store.ErrUnchanged) {
		fmt.Fprintln(e.Out, "nothing to change")
		return nil
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(e.Out, "profile v%d (%s)\n", v, cmd)
	republish(ctx, e)
	return nil
}

// Status writes the learning lines of `synaxi status` (tab-separated label
// and text) and the dead letters, each with its error and how to retry.
func Status(w io.Writer, e Env) {
	p, err := e.store().Load()
	switch {
	case errors.Is(err, store.ErrDamaged):
		fix := "`synaxi profile reset` starts afresh (the damaged file is kept beside it)"
		if good, gerr := e.store().LastGood(); gerr == nil && good > 0 {
			fix = fmt.Sprintf("`synaxi profile rollback` restores v%d, the last good version (the damaged file is kept beside it)", good)
		}
		fmt.Fprintf(w, "profile\tdamaged: %v; %s\n", err, fix)
	case err != nil:
		fmt.Fprintf(w, "profile\tunreadable: %v (make it readable)\n", err)
	default:
		fmt.Fprintf(w, "profile\tv%d: %d entries from %d sessions\n", p.Version, len(p.Entries), len(p.Ingested))
		if n := len(p.Candidates("")); n > 0 {
			fmt.Fprintf(w, "  review\t%d candidate(s) wait for you; none is published before you accept it: `synaxi profile review`\n", n)
		} else {
			fmt.Fprintf(w, "  review\t0 candidates waiting\n")
		}
		if n := len(p.Pruned); n > 0 {
			last := p.Pruned[n-1]
			fmt.Fprintf(w, "  pruned\t%d candidate(s) pruned after you had seen them (not repeated in many later sessions of their project, or over the cap); the last on %s: “%s” (%s). Accepted rules are never pruned\n",
				n, last.At.Local().Format("2006-01-02"), oneLine(last.Text), last.Why)
		}
	}
	if c, err := screen.LoadCounts(e.Dirs.StatePath("ingest", screen.CountsFile)); err != nil {
		fmt.Fprintf(w, "safety gate\tcounter unreadable: %v\n", err)
	} else if c.SecretsDropped+c.DangerousFlagged > 0 {
		fmt.Fprintf(w, "safety gate\t%d candidate(s) dropped whole for carrying a secret (never stored), %d flagged dangerous (published only if you accept them)\n",
			c.SecretsDropped, c.DangerousFlagged)
	}
	q := queue.Open(e.Dirs.StatePath("ingest"))
	st, err := q.Load()
	if err != nil {
		fmt.Fprintf(w, "ingest queue\tunreadable: %v\n", err)
		return
	}
	retrying := 0
	for _, j := range st.Pending {
		if j.Tries > 0 {
			retrying++
		}
	}
	dead, err := q.DeadLetters()
	if err != nil {
		fmt.Fprintf(w, "ingest queue\tdead letters unreadable: %v\n", err)
		return
	}
	line := fmt.Sprintf("%d queued (%d retrying), %d dead letter(s)", len(st.Pending), retrying, len(dead))
	if _, next := st.Due(time.Now()); !next.IsZero() {
		line += fmt.Sprintf("; next retry due %s (a drain runs at every session end)", next.Local().Format("15:04:05"))
	}
	if n := q.SetAside(); n > 0 {
		line += fmt.Sprintf(", %d corrupt line(s) set aside in %s", n, q.Dir())
	}
	fmt.Fprintf(w, "ingest queue\t%s\n", line)
	if len(st.Pending) > 0 {
		// Why jobs wait: the drain says it in its log (a config error, a
		// model endpoint down, a retry pending).
		if last := lastLine(filepath.Join(q.Dir(), "drain.log")); last != "" {
			fmt.Fprintf(w, "  last drain\t%s\n", last)
		}
	}
	const shown = 10
	if len(dead) > shown {
		fmt.Fprintf(w, "  dead letters\t%d older ones not listed (all in %s)\n", len(dead)-shown, filepath.Join(q.Dir(), "dead.jsonl"))
		dead = dead[len(dead)-shown:]
	}
	for _, d := range dead {
		fmt.Fprintf(w, "  dead letter\tsession %s after %d tr%s: %s (fix it, then `synaxi ingest %s`)\n",
			d.Session, d.Tries, map[bool]string{true: "y", false: "ies"}[d.Tries == 1], d.Error, d.Transcript)
	}
}
