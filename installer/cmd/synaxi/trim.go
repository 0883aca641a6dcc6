package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/synaxi/synaxi/internal/cmdline"

	"github.com/synaxi/synaxi/internal/tokens"
	"github.com/synaxi/synaxi/internal/transcript"
	"github.com/synaxi/synaxi/internal/trim"
	"github.com/synaxi/synaxi/internal/xdg"
	"github.com/synaxi/synaxi/learning/read"
)

// runTrim is `synaxi trim`: the needed set of a main session's transcript
// staged for its project, shown with its size, for the next /clear there
// (docs/trim.md). --cancel drops what is staged.
func runTrim(args []string, stdout, stderr io.Writer) int {
	fs := cmdline.Flags("trim", stderr)
	session := fs.String("session", "", "the session to trim (its transcript is found under Claude Code's projects folder)")
	file := fs.String("transcript", "", "the transcript file to trim (default: the newest session of this directory)")
	ttl := fs.Duration("ttl", trim.DefaultTTL, "how long the staged block waits for /clear")
	maxChars := fs.Int("max-chars", trim.MaxChars, "the largest block to stage, in characters")
	dry := fs.Bool("dry-run", false, "show the block and its size without staging it")
	cancel := fs.Bool("cancel", false, "drop the block staged for this directory")
	if fs.Parse(args) != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "synaxi trim: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *ttl <= 0 || *maxChars < 1000 {
		fmt.Fprintln(stderr, "synaxi trim: --ttl must be positive and --max-chars at least 1000")
		return 2
	}
	d := xdg.Resolve()
	wd, err := os.Getwd()
	if err != nil {
		return cmdline.Fail(stderr, err)
	}
	if *cancel {
		had, err := trim.Cancel(d, wd)
		if err != nil {
			return cmdline.Fail(stderr, err)
		}
		if !had {
			fmt.Fprintf(stdout, "nothing was staged for %s\n", wd)
			return 0
		}
		fmt.Fprintf(stdout, "dropped the trim staged for %s\n", wd)
		return 0
	}
	path, err := findTranscript(*file, *session, wd, os.Getenv)
	if err != nil {
		return cmdline.Fail(stderr, err)
	}
	set, err := trim.Read(path, typedTurns(path, stderr))
	if err != nil {
		return cmdline.Fail(stderr, err)
	}
	if set.Empty() {
		return cmdline.Fail(stderr, fmt.Errorf("nothing to carry in %s: no typed turn, file, command or todo in its main conversation", path))
	}
	block := trim.Render(set, *maxChars)
	now := time.Now()
	st := &trim.Stage{Project: set.Cwd, Session: set.Session, Transcript: path, Created: now.UTC(),
		Expires: now.Add(*ttl).UTC(), Block: block, Tokens: tokens.Estimate(block)}
	if st.Project == "" {
		st.Project = wd
	}
	fmt.Fprintf(stdout, "%s\n---\n", block)
	if *dry {
		fmt.Fprintf(stdout, "synaxi trim: would carry about %d tokens (%d characters); nothing staged (--dry-run)\n",
			st.Tokens, len(block))
		return 0
	}
	if err := trim.Save(d, st); err != nil {
		return cmdline.Fail(stderr, err)
	}
	fmt.Fprintf(stdout, "synaxi trim: staged about %d tokens (%d characters) for %s", st.Tokens, len(block), st.Project)
	if set.ContextNow > 0 {
		fmt.Fprintf(stdout, "; the conversation's context is %d tokens now", set.ContextNow)
	}
	fmt.Fprintf(stdout, ".\nRun /clear within %s: the next session in this project starts with the block above, once. `synaxi trim --cancel` drops it.\n", *ttl)
	return 0
}

// typedTurns is what the person typed in each human turn, as the learning
// loop's reader sees it (package learning/read: pasted logs, traces and
// the assistant's own words left out, secrets scrubbed), keyed by record.
// When that reader refuses the transcript (a torn last line, say), trim
// keeps transcript.HumanText's text and says so on stderr.
func typedTurns(path string, stderr io.Writer) trim.TypedFunc {
	doc, err := read.Read(path, 0)
	if err != nil {
		fmt.Fprintf(stderr, "synaxi trim: your turns are carried as they are (the learning reader could not split them: %v)\n", err)
		return nil
	}
	typed := make(map[string]string, len(doc.Turns))
	for _, t := range doc.Turns {
		typed[t.UUID] = strings.TrimSpace(strings.Join(t.Typed(), "\n"))
	}
	return func(rec *transcript.Record, _ string) (string, bool) {
		text, ok := typed[rec.UUID]
		return text, ok && text != ""
	}
}

// findTranscript is the transcript to trim: the file given, else the
// session's (under Claude Code's projects folder), else the newest of the
// working directory's project folder. A subagent's transcript is refused:
// trim is for a main session.
func findTranscript(file, session, wd string, getenv func(string) string) (string, error) {
	projects := xdg.ClaudeProjects(getenv)
	switch {
	case file != "":
	case session != "":
		if strings.ContainsAny(session, `/\`) || session == "." || session == ".." {
			return "", fmt.Errorf("--session %q is not a session id", session)
		}
		found, _ := filepath.Glob(filepath.Join(projects, "*", session+".jsonl"))
		if len(found) == 0 {
			return "", fmt.Errorf("no transcript of session %s under %s; pass --transcript FILE", session, projects)
		}
		file = found[0]
	default:
		newest, err := newestTranscript(filepath.Join(projects, projectFolder(wd)))
		if err != nil {
			return "", fmt.Errorf("no session transcript for %s under %s (%w); pass --session ID or --transcript FILE", wd, projects, err)
		}
		file = newest
	}
	if strings.Contains(filepath.ToSlash(file), "/subagents/") {
		return "", fmt.Errorf("%s is a subagent's transcript: trim a main session", file)
	}
	if _, err := os.Stat(file); err != nil {
		return "", fmt.Errorf("transcript: %w", err)
	}
	return file, nil
}

// projectFolder is the name Claude Code gives a directory's folder under
// projects/: every character other than an ASCII letter or digit becomes
// '-'.
func projectFolder(dir string) string {
	b := []byte(dir)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '-'
		}
	}
	return string(b)
}

// newestTranscript is the most recently modified *.jsonl in dir.
func newestTranscript(dir string) (string, error) {
	found, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return "", err
	}
	type f struct {
		path string
		mod  time.Time
	}
	var fs []f
	for _, p := range found {
		if fi, err := os.Stat(p); err == nil {
			fs = append(fs, f{p, fi.ModTime()})
		}
	}
	if len(fs) == 0 {
		return "", errors.New("none found")
	}
	slices.SortFunc(fs, func(a, b f) int { return b.mod.Compare(a.mod) })
	return fs[0].path, nil
}
