package review

import (
	"fmt"
	"time"

	"github.com/synaxi/synaxi/internal/statefile"
	"github.com/synaxi/synaxi/internal/xdg"
	"github.com/synaxi/synaxi/learning/publish"
	"github.com/synaxi/synaxi/learning/store"
)

// NoticePath is the state file that remembers when the notice was last
// given.
func NoticePath(d xdg.Dirs) string { return d.StatePath("learning", "notice.json") }

type noticeState struct {
	Last time.Time `json:"last"`
}

// Notice returns the one line SessionStart adds when candidates that apply
// in project wait for the user, and records that it was given; "" when
// none wait or the line was already given on now's calendar day (local
// time). It never names a candidate.
func Notice(d xdg.Dirs, project string, now time.Time) (string, error) {
	p, err := store.Open(publish.ProfileDir(d)).Load()
	if err != nil {
		return "", err
	}
	n := len(p.Candidates(project))
	if n == 0 {
		return "", nil
	}
	line := ""
	err = statefile.Update(NoticePath(d), func(st *noticeState) error {
		y1, m1, d1 := st.Last.Local().Date()
		y2, m2, d2 := now.Local().Date()
		if y1 == y2 && m1 == m2 && d1 == d2 {
			return statefile.ErrSkip
		}
		st.Last = now.UTC()
		line = NoticeLine(n)
		return nil
	})
	return line, err
}

// NoticeLine is the notice for n waiting candidates.
func NoticeLine(n int) string {
	things := "things"
	if n == 1 {
		things = "thing"
	}
	return fmt.Sprintf("synaxi learned %d %s it may apply from now on — /synaxi:review", n, things)
}
