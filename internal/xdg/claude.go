package xdg

import "path/filepath"

// ClaudeDir is Claude Code's configuration directory, where its settings,
// plugins and session transcripts live: $CLAUDE_CONFIG_DIR, else ~/.claude
// (on every platform, as Claude Code has it). It is not synaxi's directory;
// synaxi reads it, and the installer edits its settings.
func ClaudeDir(getenv func(string) string) string {
	if d := getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return d
	}
	return filepath.Join(homeDir(getenv), ".claude")
}

// ClaudeProjects is Claude Code's transcript folder, ClaudeDir/projects:
// one folder per project, one <session>.jsonl per session.
func ClaudeProjects(getenv func(string) string) string {
	return filepath.Join(ClaudeDir(getenv), "projects")
}
