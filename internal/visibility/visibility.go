// Package visibility is the contract between the projection proxy and the
// no-reread hook: after each projected request the proxy writes, per
// conversation context, which files (and line ranges) the model can fully see
// and which the projection evicted. The hook allows a re-read of anything
// evicted, so the agent is never denied content it no longer has.
package visibility

import (
	"io/fs"
	"strings"
	"time"

	"github.com/synaxi/synaxi/internal/statefile"
	"github.com/synaxi/synaxi/internal/xdg"
)

// Version is the schema version written in Export.V.
const Version = 1

// MainAgent stands for the main conversation (no agent id).
const MainAgent = "main"

// Range is a 1-based, inclusive line range. End == 0 means "to the end of
// the file".
type Range struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// File is what the model can see of one file.
type File struct {
	// Visible lists the line ranges whose content is present, verbatim, in
	// the last projected request.
	Visible []Range `json:"visible,omitempty"`
	// Evicted is true when the projection dropped content of this file that
	// the agent had read; a re-read must be allowed.
	Evicted bool `json:"evicted,omitempty"`
}

// Export is one conversation context's visibility after a projected serve.
type Export struct {
	V       int             `json:"v"`
	Session string          `json:"session"`
	Agent   string          `json:"agent"`
	Updated time.Time       `json:"updated"`
	Files   map[string]File `json:"files"` // absolute path → visibility
}

// ContextKey names one conversation context: a session plus an agent id
// (every subagent has its own context window). An empty agent is the main
// conversation. The two are joined by ContextSep, which statefile.SafeName
// never emits, so distinct pairs get distinct keys and SessionPrefix
// matches exactly one session's contexts.
func ContextKey(session, agent string) string {
	if agent == "" {
		agent = MainAgent
	}
	return SessionPrefix(session) + statefile.SafeName(agent)
}

// ContextSep joins a context key's session and agent.
const ContextSep = "@"

// SessionPrefix is what every context key of session starts with.
func SessionPrefix(session string) string { return statefile.SafeName(session) + ContextSep }

// Path is the export file of a context.
func Path(d xdg.Dirs, session, agent string) string {
	return d.StatePath("visibility", ContextKey(session, agent)+".json")
}

// Write replaces the export of e's context atomically.
func Write(d xdg.Dirs, e *Export) error {
	e.V = Version
	return statefile.WriteJSON(Path(d, e.Session, e.Agent), e)
}

// Read loads a context's export; a missing export is an error for which
// errors.Is(err, fs.ErrNotExist) holds (the context is not projected).
func Read(d xdg.Dirs, session, agent string) (*Export, error) {
	var e Export
	if err := statefile.ReadJSON(Path(d, session, agent), &e); err != nil {
		return nil, err
	}
	return &e, nil
}

// Prune removes the exports not written for longer than age: contexts that
// ended long ago (a live context's export is rewritten on every projected
// request). It returns how many it removed.
func Prune(d xdg.Dirs, age time.Duration, now time.Time) int {
	return statefile.PruneStale(d.StatePath("visibility"), age, now, func(e fs.DirEntry) bool {
		return e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".json")
	})
}
