package extract

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/synaxi/synaxi/learning/read"

	"github.com/synaxi/synaxi/learning/redact"
	"github.com/synaxi/synaxi/learning/screen"
	"github.com/synaxi/synaxi/learning/store"
)

// Rejection is an observation Validate refused, with the reason.
type Rejection struct {
	Observation store.Observation
	Reason      string
}

// MaxTextLen bounds an observation's text.
const MaxTextLen = 400

// Validate keeps the observations every one of whose claims is grounded in
// d: a known dimension, non-empty text, and at least one evidence quote that
// occurs verbatim in the human-typed turn it names. Evidence that is not
// grounded is dropped; an observation left without any is rejected, as is
// one whose every quote is a question or a hedge (a hypothesis is not a
// fact), and a guard that shares no word with its quotes. Session and
// timestamp of each kept quote are taken from the transcript, never from the
// extractor.
func Validate(d *read.Doc, obs []store.Observation) (kept []store.Observation, rejected []Rejection) {
	for _, o := range obs {
		o.Text = strings.TrimSpace(redact.Redact(o.Text))
		reject := func(why string) { rejected = append(rejected, Rejection{o, why}) }
		switch {
		case !store.ValidDimension(o.Dimension):
			reject(fmt.Sprintf("unknown dimension %q", o.Dimension))
			continue
		case o.Text == "":
			reject("empty text")
			continue
		case len(o.Text) > MaxTextLen:
			reject(fmt.Sprintf("text longer than %d bytes", MaxTextLen))
			continue
		}
		if o.Confidence <= 0 || o.Confidence > 1 {
			o.Confidence = 0.5
		}
		var evs []store.Evidence
		hypotheses := 0
		for _, ev := range o.Evidence {
			ev.Quote = strings.TrimSpace(ev.Quote)
			if !d.Grounded(ev.UUID, ev.Quote) {
				continue
			}
			t := d.Turn(ev.UUID)
			ev.Session, ev.Timestamp = d.Session, t.Timestamp
			if ev.Context == "" {
				ev.Context = t.Before.Describe()
			}
			ev.Answered = t.Before.Said
			if isQuestion(ev.Quote) || hedgeRE.MatchString(ev.Quote) {
				hypotheses++
			}
			evs = append(evs, ev)
		}
		switch {
		case len(evs) == 0:
			reject("no evidence quote occurs in a human-typed turn of the session")
			continue
		case hypotheses == len(evs):
			reject("every quote is a question or a hypothesis, not a stated fact")
			continue
		case o.Dimension == store.Guards && !sharesWord(o.Text, evs):
			reject("guard shares no word with the quotes it cites")
			continue
		}
		o.Evidence = evs
		kept = append(kept, o)
	}
	return kept, rejected
}

func sharesWord(text string, evs []store.Evidence) bool {
	for _, ev := range evs {
		if store.Similarity(text, ev.Quote) > 0 || store.Similarity(text, "not "+ev.Quote) > 0 {
			return true
		}
	}
	return false
}

// Options configures Ingest.
type Options struct {
	Extractor Extractor // nil means Embedded
	MaxBytes  int64     // transcript size limit; 0 means DefaultMaxBytes
	Project   string    // overrides the repository root found from the cwd
	Force     bool      // re-read a session the ledger says is unchanged
	// Session, when the caller knows it (the SessionEnd hook's id), lets
	// an unchanged transcript be skipped by its size without reading it.
	Session string
	// DryRun extracts and validates but saves nothing.
	DryRun bool
	// Counts, when set, is the gate's state counter (screen.CountsFile in
	// the ingest state directory): candidates dropped for a secret and
	// flagged dangerous are added to it.
	Counts string
	// Reinforced confirms candidates that typed quotes from two sessions
	// support (learning.publish = "reinforced"; see store.Merge).
	Reinforced bool
}

// Result says what one Ingest did.
type Result struct {
	Session   string
	Project   string
	Extractor string
	Version   int  // the profile version written; 0 when nothing was
	Unchanged bool // the ledger already has this transcript at this size
	Proposed  int
	Kept      []store.Observation
	Rejected  []Rejection
	Merge     store.MergeStats
	// Gate is what the safety gate did to this session's candidates:
	// dropped whole for carrying a secret, flagged dangerous.
	Gate screen.Counts
}

// Ingest reads the transcript at path, extracts, validates and merges it
// into store as one new version. Extraction (which may call a model) runs
// outside the store's lock. A transcript the ledger already has at the same
// size is not read again unless opts.Force.
func Ingest(ctx context.Context, profiles *store.Store, path string, opts Options) (*Result, error) {
	ex := opts.Extractor
	if ex == nil {
		ex = Embedded{}
	}
	if opts.Session != "" && !opts.Force {
		cur, err := profiles.Load()
		if err != nil {
			return nil, err
		}
		if led, ok := cur.Ingested[opts.Session]; ok {
			if fi, err := os.Stat(path); err == nil && fi.Size() == led.Bytes {
				return &Result{Session: opts.Session, Project: led.Project, Extractor: ex.Name(), Unchanged: true}, nil
			}
		}
	}
	d, err := read.Read(path, opts.MaxBytes)
	if err != nil {
		return nil, err
	}
	project := opts.Project
	if project == "" {
		project = store.ProjectRoot(d.Cwd)
	}
	res := &Result{Session: d.Session, Project: project, Extractor: ex.Name()}
	cur, err := profiles.Load()
	if err != nil {
		return nil, err
	}
	if led, ok := cur.Ingested[d.Session]; ok && led.Bytes == d.Bytes && !opts.Force {
		res.Unchanged = true
		return res, nil
	}
	obs, err := ex.Extract(ctx, d, cur.ForProject(project))
	if err != nil {
		return nil, fmt.Errorf("extract %s with %s: %w", path, ex.Name(), err)
	}
	res.Proposed = len(obs)
	res.Kept, res.Rejected = Validate(d, obs)
	res.Kept, res.Gate = screen.Candidates(res.Kept)
	if opts.DryRun {
		return res, nil
	}
	if opts.Counts != "" {
		if err := screen.AddCounts(opts.Counts, res.Gate, profiles.Now()); err != nil {
			return nil, err
		}
	}
	batch := store.Batch{Session: d.Session, Project: project, At: d.End, Bytes: d.Bytes, Observations: res.Kept, Reinforced: opts.Reinforced,
		Now: profiles.Now()}
	if batch.At.IsZero() {
		batch.At = profiles.Now()
	}
	v, err := profiles.Update("ingest "+d.Session, func(p *store.Profile) error {
		res.Merge = store.Merge(p, batch)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("save profile: %w", err)
	}
	res.Version = v
	return res, nil
}
