// Package screen is the learning loop's gate (read → extract → screen →
// store → review → publish): it screens every extracted candidate before
// anything is stored.
//
// A candidate whose text, quote or context carries a secret, or the mark
// of one the reader redacted (redact.Secret), is dropped whole, never
// redacted and kept. One that tells the agent to do something destructive
// or security-weakening, or to ignore its instructions (Danger), is kept
// with a dangerous flag and its reason, so it is never published without
// the user's explicit acceptance. Both are counted in the state counter
// (Counts, gate.json) that `synaxi status` shows.
package screen

import (
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/synaxi/synaxi/internal/statefile"
	"github.com/synaxi/synaxi/learning/redact"
	"github.com/synaxi/synaxi/learning/store"
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
			v.Secret = redact.Secret(s)
		}
		if v.Danger == "" {
			v.Danger, _ = Danger(s)
		}
	}
	return v
}

// Candidates screens grounded candidates before anything is
// stored: a candidate whose text, quote or context carries a secret (or
// the mark of one the reader redacted) is dropped whole, never redacted
// and kept; one that tells the agent to do something destructive or
// security-weakening, or to ignore its instructions, is kept with a
// dangerous flag (store.FlagDangerous and the reason), so it is never
// published without the user's explicit acceptance. The counts say what it
// did.
func Candidates(obs []store.Observation) (kept []store.Observation, c Counts) {
	for _, o := range obs {
		texts := []string{o.Text}
		for _, ev := range o.Evidence {
			texts = append(texts, ev.Quote, ev.Context)
		}
		v := Check(texts...)
		if v.Secret != "" {
			c.SecretsDropped++
			continue
		}
		if v.Danger != "" {
			c.DangerousFlagged++
			o.Flags = append(o.Flags, store.Flag{Kind: store.FlagDangerous, Reason: v.Danger})
		}
		kept = append(kept, o)
	}
	return kept, c
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
