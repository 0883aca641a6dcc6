package transcript

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
)

// SubagentFiles returns the subagent transcripts of the session whose main
// transcript is sessionTranscriptPath ("<dir>/<session-id>.jsonl"), sorted by
// path: every <dir>/<session-id>/subagents/agent-*.jsonl, and, for transcripts
// written by older Claude Code versions, every <dir>/agent-*.jsonl whose first
// record names the session. A session without subagents yields no files and
// no error.
func SubagentFiles(sessionTranscriptPath string) ([]string, error) {
	dir := filepath.Dir(sessionTranscriptPath)
	session := strings.TrimSuffix(filepath.Base(sessionTranscriptPath), ".jsonl")
	files, err := filepath.Glob(filepath.Join(dir, session, "subagents", "agent-*.jsonl"))
	if err != nil {
		return nil, fmt.Errorf("find subagent transcripts: %w", err)
	}
	old, err := filepath.Glob(filepath.Join(dir, "agent-*.jsonl"))
	if err != nil {
		return nil, fmt.Errorf("find subagent transcripts: %w", err)
	}
	for _, p := range old {
		id, err := firstSessionID(p)
		if err != nil {
			return nil, err
		}
		if id == session {
			files = append(files, p)
		}
	}
	sort.Strings(files)
	return files, nil
}

// firstSessionID is the session id of the first record that carries one,
// looking at no more than a few records.
func firstSessionID(path string) (string, error) {
	r, err := Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", nil
		}
		return "", err
	}
	defer r.Close()
	for range 8 {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return "", nil
		}
		if err != nil {
			return "", err
		}
		if rec.SessionID != "" {
			return rec.SessionID, nil
		}
	}
	return "", nil
}
