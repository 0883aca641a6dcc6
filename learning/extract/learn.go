package extract

import (
	"fmt"
	"strings"

	"github.com/synaxi/synaxi/learning/read"
	"github.com/synaxi/synaxi/learning/redact"
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
