// Package cli implements the synaxi CLI's side of the learning loop:
// `synaxi ingest` (backfill from Claude Code's transcripts, or named files,
// in the foreground), `synaxi profile …` (review, accept, reject, show,
// export, history, rollback, edit, forget, exclude, include, reset) and the
// learning lines of `synaxi status`.
//
// Every command that changes the profile saves a new version through
// store.Store and then runs publish.Publish, so what sessions receive and
// what the opt-in writers published always follows the current version.
// Nothing here runs while holding the profile lock except the store's own
// updates.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/transcript"
	"github.com/synaxi/synaxi/internal/xdg"
	"github.com/synaxi/synaxi/learning/pipeline"
	"github.com/synaxi/synaxi/learning/publish"
	"github.com/synaxi/synaxi/learning/queue"
	"github.com/synaxi/synaxi/learning/store"
)

// barThrottle is the least time between two redraws of the progress bar
// (tests set it to 0 so every step is drawn).
var barThrottle = 100 * time.Millisecond

// Env is what the commands need from outside.
type Env struct {
	Dirs   xdg.Dirs
	Config config.Config
	Getenv func(string) string
	Out    io.Writer
	Err    io.Writer
	// Terminal is true when Err is a terminal (a progress bar is drawn).
	Terminal bool
}

func (e Env) store() *store.Store { return store.Open(store.Dir(e.Dirs)) }

// IngestOptions selects what `synaxi ingest` reads.
type IngestOptions struct {
	All     bool     // every session under Claude Code's projects folder
	Project string   // only sessions whose repository root is this
	Files   []string // these transcripts, in this order
	Force   bool     // re-read sessions the ledger has at the same size
	DryRun  bool     // print what would be learned; save nothing
}

// Sessions lists the main-session transcripts under dir (not subagents),
// oldest first by modification time, so time decay runs forwards.
func Sessions(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*", "*.jsonl"))
	if err != nil {
		return nil, err
	}
	files = slices.DeleteFunc(files, func(f string) bool { return strings.HasPrefix(filepath.Base(f), "agent-") })
	mtime := map[string]time.Time{}
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil {
			mtime[f] = fi.ModTime()
		}
	}
	slices.SortStableFunc(files, func(a, b string) int { return mtime[a].Compare(mtime[b]) })
	return files, nil
}

// SessionProject is the repository root of the first cwd a transcript
// records ("" if none in its first records).
func SessionProject(path string) string {
	r, err := transcript.Open(path)
	if err != nil {
		return ""
	}
	defer r.Close()
	for range 200 {
		rec, err := r.Next()
		if err != nil {
			return ""
		}
		if rec.Cwd != "" {
			return store.ProjectRoot(rec.Cwd)
		}
	}
	return ""
}

// IngestSummary is what one `synaxi ingest` did.
type IngestSummary struct {
	Read, Learned, Unchanged, Failed int
	Kept, Rejected                   int
	Forgotten                        int // observations the user had rejected or forgotten before
	Version                          int
}

// Ingest runs the learning pipeline (package pipeline) over the selected
// transcripts in the foreground, then publishes once if the profile changed. Per-file failures
// are printed and counted; the error is for what stops the whole run.
func Ingest(ctx context.Context, e Env, o IngestOptions) (*IngestSummary, error) {
	files, err := o.transcripts(e)
	if err != nil {
		return nil, err
	}
	learn, err := pipeline.New(e.Dirs, e.Config, e.Getenv)
	if err != nil {
		return nil, err
	}
	bar := newBar(e, len(files))
	sum := &IngestSummary{}
	var failures []string
	var dry []*pipeline.Result
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		res, err := learn.Ingest(ctx, f, pipeline.Options{Force: o.Force, DryRun: o.DryRun})
		sum.Read++
		if err == nil {
			if _, ferr := queue.Open(e.Dirs.StatePath("ingest")).Forgive(f); ferr != nil {
				fmt.Fprintf(e.Err, "synaxi ingest: clear dead letter of %s: %v\n", f, ferr)
			}
		}
		switch {
		case err != nil:
			sum.Failed++
			failures = append(failures, err.Error())
		case res.Unchanged:
			sum.Unchanged++
		default:
			sum.Learned++
			// An observation the user had rejected (or forgotten) is
			// dropped by the merge, not kept.
			sum.Kept += len(res.Kept) - res.Merge.Forgotten
			sum.Forgotten += res.Merge.Forgotten
			sum.Rejected += len(res.Rejected)
			sum.Version = max(sum.Version, res.Version)
			if o.DryRun {
				dry = append(dry, res)
			}
		}
		if bar != nil {
			_ = bar.Add(1)
		}
	}
	if bar != nil {
		_ = bar.Finish()
	}
	for _, f := range failures {
		fmt.Fprintf(e.Err, "synaxi ingest: %s\n", f)
	}
	if o.DryRun {
		printDryRun(e.Out, dry)
	}
	fmt.Fprintf(e.Out, "%d transcript(s): %d learned from (%d observations kept, %d rejected as ungrounded, %d you had rejected before), %d already read at their current size, %d failed\n",
		sum.Read, sum.Learned, sum.Kept, sum.Rejected, sum.Forgotten, sum.Unchanged, sum.Failed)
	if sum.Version > 0 {
		fmt.Fprintf(e.Out, "profile v%d\n", sum.Version)
		republish(ctx, e)
	}
	return sum, nil
}

// transcripts is what o selects: its files, else every session under
// Claude Code's projects folder (--all), else those that ran in o.Project.
func (o IngestOptions) transcripts(e Env) ([]string, error) {
	if len(o.Files) > 0 {
		return o.Files, nil
	}
	all, err := Sessions(xdg.ClaudeProjects(e.Getenv))
	if err != nil {
		return nil, err
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("no transcripts under %s (is Claude Code's config somewhere else? set CLAUDE_CONFIG_DIR)", xdg.ClaudeProjects(e.Getenv))
	}
	if o.All {
		return all, nil
	}
	want := o.Project
	if abs, err := filepath.Abs(want); err == nil {
		want = abs
	}
	files := slices.DeleteFunc(slices.Clone(all), func(f string) bool { return SessionProject(f) != want })
	if len(files) == 0 {
		return nil, fmt.Errorf("no transcript under %s ran in %s (use --all for every project)", xdg.ClaudeProjects(e.Getenv), want)
	}
	return files, nil
}

// newBar is the progress bar over n transcripts, drawn on a terminal when
// there is more than one; nil otherwise.
func newBar(e Env, n int) *progressbar.ProgressBar {
	if !e.Terminal || n <= 1 {
		return nil
	}
	return progressbar.NewOptions(n, progressbar.OptionSetWriter(e.Err),
		progressbar.OptionSetDescription("ingest"), progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true), progressbar.OptionClearOnFinish(),
		progressbar.OptionThrottle(barThrottle))
}

// printDryRun lists what a dry run would have learned and rejected.
func printDryRun(w io.Writer, dry []*pipeline.Result) {
	for _, r := range dry {
		for _, k := range r.Kept {
			ev := k.Evidence[0]
			fmt.Fprintf(w, "%s\t%s: %s\n\t  “%s” (message %s)\n", r.Session, k.Dimension, k.Text, oneLine(ev.Quote), ev.UUID)
		}
		for _, rj := range r.Rejected {
			fmt.Fprintf(w, "%s\trejected %s: %s (%s)\n", r.Session, rj.Observation.Dimension, rj.Observation.Text, rj.Reason)
		}
	}
	fmt.Fprint(w, "dry run: nothing saved\n")
}

// republish runs publish.Publish and prints what it says; its failure does
// not undo the profile change that preceded it.
func republish(ctx context.Context, e Env) {
	rep, err := publish.Publish(ctx, e.Dirs, e.Config.Guidance, e.Getenv)
	printPublished(e, rep, err)
}

// printPublished says what a publication changed and any problem.
func printPublished(e Env, rep *publish.Report, err error) {
	if err != nil {
		fmt.Fprintf(e.Err, "synaxi: publish guidance: %v (the profile change is saved; run the command again to retry)\n", err)
		return
	}
	for _, c := range rep.Changed {
		fmt.Fprintf(e.Out, "published %s\n", c)
	}
	for _, p := range rep.Problems {
		fmt.Fprintf(e.Err, "synaxi: %v\n", p)
	}
}

// ErrUsage is returned for a bad profile subcommand.
var ErrUsage = errors.New("usage")
