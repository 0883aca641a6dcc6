package projection

import (
	"errors"
	"sync"

	"github.com/tidwall/gjson"
)

// aheadMin is the number of messages to fold above which they are parsed
// on a second goroutine while the fold consumes them. A running proxy
// folds one or two new messages a request and parses them inline; a cold
// fold (after a restart) of a long conversation spends about a third of
// its time parsing, which then overlaps with folding on another core.
const aheadMin = 32

// ahead hands out parsed messages in order: parsed on the caller's
// goroutine, or by a producer running ahead of it.
type ahead struct {
	raws   []gjson.Result
	parsed chan parsedMessage // nil: parse inline
	done   chan struct{}
	once   sync.Once
}

var errAheadStopped = errors.New("message parser stopped early")

type parsedMessage struct {
	m   message
	err error
}

// parseAhead starts parsing raws[start:] ahead of the fold when there are
// enough of them to be worth a goroutine, and estimates each block's
// tokens there too (span must be safe for concurrent use), which the fold
// would otherwise do. Parsing and estimating are pure: the messages, and
// so the served bytes, are the same either way.
func parseAhead(raws []gjson.Result, start int, span spanFunc) *ahead {
	a := &ahead{raws: raws, done: make(chan struct{})}
	if len(raws)-start < aheadMin {
		return a
	}
	a.parsed = make(chan parsedMessage, 64)
	go func() {
		defer close(a.parsed)
		for i := start; i < len(raws); i++ {
			m, err := parseMessage(raws[i], i)
			for j := range m.blocks {
				m.blocks[j].tokenCount(span)
			}
			select {
			case a.parsed <- parsedMessage{m, err}:
			case <-a.done:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return a
}

// get returns message i; calls must ask for start, start+1, … in order.
func (a *ahead) get(i int) (message, error) {
	if a.parsed == nil {
		return parseMessage(a.raws[i], i)
	}
	p, ok := <-a.parsed
	if !ok {
		return message{}, errAheadStopped
	}
	return p.m, p.err
}

// stop releases the producer if the fold ends early.
func (a *ahead) stop() { a.once.Do(func() { close(a.done) }) }
