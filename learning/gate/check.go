package gate

import (
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/synaxi/synaxi/internal/statefile"
)

// Verdict is what the gate decided about one candidate.
type Verdict struct {
	// Secret, when set, names what was found (a rule name, never the
	// secret): the candidate is dropped whole, not redacted and kept.
	Secret string
	// Danger, when set, is why the candidate is dangerous: it is stored
	// with a dangerous flag, never published without the user's explicit
	// acceptance, and review shows the reason as a warning.
	Danger string
}

// Check runs the gate over everything a candidate would store: its text,
// its quotes and their contexts.
func Check(texts ...string) Verdict {
	var v Verdict
	for _, s := range texts {
		if v.Secret == "" {
			v.Secret = secretRule(s)
		}
		if v.Danger == "" {
			v.Danger, _ = Danger(s)
		}
	}
	return v
}

// secretRule names the first secret in s, or "".
func secretRule(s string) string {
	switch {
	case s == "":
		return ""
	case containsMark(s):
		return "redacted secret"
	case Text(s) != s:
		return "scrubber"
	}
	if fs := Secrets(s); len(fs) > 0 {
		return fs[0].Rule
	}
	return ""
}

// Counts is what the gate did, over every ingest: the state counter
// `synaxi status` shows.
type Counts struct {
	SecretsDropped   int       `json:"secrets_dropped"`
	DangerousFlagged int       `json:"dangerous_flagged"`
	Updated          time.Time `json:"updated,omitzero"`
}

// CountsFile is the counter's file name in synaxi's ingest state
// directory ($XDG_STATE_HOME/synaxi/ingest).
const CountsFile = "gate.json"

// AddCounts adds c to the counter at path, under its lock.
func AddCounts(path string, c Counts, now time.Time) error {
	if c.SecretsDropped == 0 && c.DangerousFlagged == 0 {
		return nil
	}
	err := statefile.Update(path, func(cur *Counts) error {
		cur.SecretsDropped += c.SecretsDropped
		cur.DangerousFlagged += c.DangerousFlagged
		cur.Updated = now.UTC()
		return nil
	})
	if err != nil {
		return fmt.Errorf("count the gate's drops in %s: %w", path, err)
	}
	return nil
}

// LoadCounts reads the counter at path; a missing file is zero counts.
func LoadCounts(path string) (Counts, error) {
	var c Counts
	err := statefile.ReadJSON(path, &c)
	if errors.Is(err, fs.ErrNotExist) {
		return Counts{}, nil
	}
	return c, err
}
