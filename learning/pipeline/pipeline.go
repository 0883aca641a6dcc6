// Package pipeline is the one driver of synaxi's learning loop: it takes a
// finished session's transcript through read → extract → screen → store
// and saves what survives as one new profile version. The SessionEnd
// drain (package hook), `synaxi ingest` and its back-fill (package cli)
// all call Ingest; none of them runs a stage itself.
//
// Invariants:
//   - Extraction (which may call a model) runs outside the profile's lock;
//     only the merge runs under it (store.Store.Update).
//   - The screen runs before anything is stored: a candidate carrying a
//     secret is dropped whole, a dangerous one flagged, and both are
//     counted in Counts before the merge.
//   - A transcript the profile's ledger already has at the same size is not
//     read again unless Force; merging a session twice counts it once.
package pipeline

import (
	"context"
	"fmt"
	"os"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/xdg"
	"github.com/synaxi/synaxi/learning/extract"
	"github.com/synaxi/synaxi/learning/read"
	"github.com/synaxi/synaxi/learning/screen"
	"github.com/synaxi/synaxi/learning/store"
)

// Pipeline is what every session goes through, set up once per run.
type Pipeline struct {
	Store     *store.Store
	Extractor extract.Extractor // nil means extract.Embedded
	MaxBytes  int64             // transcript size limit; 0 means read.DefaultMaxBytes
	// Counts, when set, is the screen's state counter (screen.CountsFile in
	// the ingest state directory): candidates dropped for a secret and
	// flagged dangerous are added to it.
	Counts string
	// Reinforced confirms candidates that typed quotes from two sessions
	// support (learning.publish = "reinforced"; see store.Merge).
	Reinforced bool
}

// New returns the pipeline for the user's directories and configuration:
// the profile under d, the configured extractor, size limit and publication
// policy, and the screen's counter in the ingest state directory.
func New(d xdg.Dirs, cfg config.Config, getenv func(string) string) (*Pipeline, error) {
	ex, err := extract.NewExtractor(cfg.Ingest, getenv)
	if err != nil {
		return nil, err
	}
	return &Pipeline{
		Store: store.Open(store.Dir(d)), Extractor: ex, MaxBytes: int64(cfg.Ingest.MaxTranscriptMB) << 20,
		Counts:     d.StatePath("ingest", screen.CountsFile),
		Reinforced: cfg.Learning.Publish == config.PublishReinforced,
	}, nil
}

// Options are what differ from one session to the next.
type Options struct {
	Project string // overrides the repository root found from the cwd
	Force   bool   // re-read a session the ledger says is unchanged
	// Session, when the caller knows it (the SessionEnd hook's id), lets
	// an unchanged transcript be skipped by its size without reading it.
	Session string
	// DryRun extracts, validates and screens but saves nothing.
	DryRun bool
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
	Rejected  []extract.Rejection
	Merge     store.MergeStats
	// Gate is what the screen did to this session's candidates: dropped
	// whole for carrying a secret, flagged dangerous.
	Gate screen.Counts
}

// Ingest reads the transcript at path, extracts, validates, screens and
// merges it into the profile as one new version.
func (p *Pipeline) Ingest(ctx context.Context, path string, o Options) (*Result, error) {
	ex := p.Extractor
	if ex == nil {
		ex = extract.Embedded{}
	}
	if o.Session != "" && !o.Force {
		cur, err := p.Store.Load()
		if err != nil {
			return nil, err
		}
		if led, ok := cur.Ingested[o.Session]; ok {
			if fi, err := os.Stat(path); err == nil && fi.Size() == led.Bytes {
				return &Result{Session: o.Session, Project: led.Project, Extractor: ex.Name(), Unchanged: true}, nil
			}
		}
	}
	d, err := read.Read(path, p.MaxBytes)
	if err != nil {
		return nil, err
	}
	project := o.Project
	if project == "" {
		project = store.ProjectRoot(d.Cwd)
	}
	res := &Result{Session: d.Session, Project: project, Extractor: ex.Name()}
	cur, err := p.Store.Load()
	if err != nil {
		return nil, err
	}
	if led, ok := cur.Ingested[d.Session]; ok && led.Bytes == d.Bytes && !o.Force {
		res.Unchanged = true
		return res, nil
	}
	obs, err := ex.Extract(ctx, d, cur.ForProject(project))
	if err != nil {
		return nil, fmt.Errorf("extract %s with %s: %w", path, ex.Name(), err)
	}
	res.Proposed = len(obs)
	res.Kept, res.Rejected = extract.Validate(d, obs)
	res.Kept, res.Gate = screen.Candidates(res.Kept)
	if o.DryRun {
		return res, nil
	}
	if p.Counts != "" {
		if err := screen.AddCounts(p.Counts, res.Gate, p.Store.Now()); err != nil {
			return nil, err
		}
	}
	batch := store.Batch{Session: d.Session, Project: project, At: d.End, Bytes: d.Bytes, Observations: res.Kept, Reinforced: p.Reinforced,
		Now: p.Store.Now()}
	if batch.At.IsZero() {
		batch.At = p.Store.Now()
	}
	v, err := p.Store.Update("ingest "+d.Session, func(pr *store.Profile) error {
		res.Merge = store.Merge(pr, batch)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("save profile: %w", err)
	}
	res.Version = v
	return res, nil
}
