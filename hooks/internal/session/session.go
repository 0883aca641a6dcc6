// Package session keeps synaxi's per-session bookkeeping for the
// SessionStart, PreCompact and SessionEnd hooks: the session record other
// binaries read, resetting the no-reread records when the model's context is
// rebuilt, and starting the proxy on demand when this session is routed
// through it; after /clear it takes the block `synaxi trim` staged for the
// project (Trimmed: once, main conversation only). After a plugin update the new version's SessionStart also
// replaces what the old one left: the stable copies of the binaries
// (RefreshStable) and a running proxy of an older version (ReplaceOlder,
// which drops no request in flight); a development build replaces nothing.
package session

import (
	"time"

	"github.com/synaxi/synaxi/internal/hookio"
	"github.com/synaxi/synaxi/internal/statefile"
	"github.com/synaxi/synaxi/internal/xdg"
)

// Record is the session record's documented fields. The file is updated as
// a JSON object, so fields other binaries add are kept.
type Record struct {
	SessionID      string `json:"session_id"`
	Source         string `json:"source"`
	AgentType      string `json:"agent_type"`
	Cwd            string `json:"cwd"`
	TranscriptPath string `json:"transcript_path"`
	Started        string `json:"started"`              // RFC 3339, first start
	Ended          string `json:"ended,omitempty"`      // RFC 3339
	EndReason      string `json:"end_reason,omitempty"` // SessionEnd reason
}

// Path is the session record of a session.
func Path(d xdg.Dirs, session string) string {
	return d.StatePath("sessions", statefile.SafeName(session), "session.json")
}

// Read loads a session's record.
func Read(d xdg.Dirs, session string) (*Record, error) {
	var r Record
	if err := statefile.ReadJSON(Path(d, session), &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Start records a SessionStart: the first start sets "started"; later starts
// (resume, clear, compact) update the other fields and keep the rest.
func Start(d xdg.Dirs, in *hookio.Input, now time.Time) error {
	return statefile.Update(Path(d, in.SessionID), func(m *map[string]any) error {
		if *m == nil {
			*m = map[string]any{}
		}
		r := *m
		r["session_id"] = in.SessionID
		r["source"] = in.Source
		r["agent_type"] = in.AgentType
		r["cwd"] = in.Cwd
		r["transcript_path"] = in.TranscriptPath
		if s, _ := r["started"].(string); s == "" {
			r["started"] = now.UTC().Format(time.RFC3339)
		}
		return nil
	})
}

// End adds "ended" and "end_reason" to the session's record.
func End(d xdg.Dirs, in *hookio.Input, now time.Time) error {
	return statefile.Update(Path(d, in.SessionID), func(m *map[string]any) error {
		if *m == nil {
			*m = map[string]any{"session_id": in.SessionID}
		}
		(*m)["ended"] = now.UTC().Format(time.RFC3339)
		(*m)["end_reason"] = in.Reason
		return nil
	})
}
