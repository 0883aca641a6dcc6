package review

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/synaxi/synaxi/internal/statefile"
	"github.com/synaxi/synaxi/internal/xdg"
	"github.com/synaxi/synaxi/learning/store"
	"github.com/tidwall/gjson"
)

// NoticePath is the state file that remembers when the notice was last
// given.
func NoticePath(d xdg.Dirs) string { return d.StatePath("learning", "notice.json") }

// noticeState remembers, per project ("" for sessions outside one), when
// the notice was last given there.
type noticeState struct {
	Projects map[string]time.Time `json:"projects,omitempty"`
}

func (st *noticeState) givenToday(project string, now time.Time) bool {
	return sameDay(st.Projects[project], now)
}

// Notice returns the one line SessionStart shows the user (and tells the
// model) when candidates that apply in project wait, and records that it
// was given; "" when none wait or the line was already given in project
// on now's calendar day (local time): at most once a day per project, so a
// user who works in two projects hears of each. It never names a candidate. It runs at every session start, so it
// reads the small notice state first and the profile only when the line
// may be due, and then only the entries' state, scope and project (gjson,
// no full decode: a 300-entry profile cost SessionStart 5 ms decoded).
func Notice(d xdg.Dirs, project string, now time.Time) (string, error) {
	var st noticeState
	if err := statefile.ReadJSON(NoticePath(d), &st); err == nil && st.givenToday(project, now) {
		return "", nil
	}
	data, err := os.ReadFile(store.Open(store.Dir(d)).Path())
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read profile: %w", err)
	}
	n := waiting(data, project)
	if n == 0 {
		return "", nil
	}
	line := ""
	err = statefile.Update(NoticePath(d), func(st *noticeState) error {
		if st.givenToday(project, now) {
			return statefile.ErrSkip
		}
		if st.Projects == nil {
			st.Projects = map[string]time.Time{}
		}
		st.Projects[project] = now.UTC()
		line = NoticeLine(n)
		return nil
	})
	return line, err
}

// waiting counts the candidates of the profile document data that apply in
// project, as Profile.Candidates does (an entry without a state, from
// before the lifecycle, is one).
func waiting(data []byte, project string) int {
	n := 0
	gjson.GetBytes(data, "entries").ForEach(func(_, e gjson.Result) bool {
		if e.Get("state").String() == store.Confirmed {
			return true
		}
		if e.Get("scope").String() == store.ScopeGlobal || (project != "" && e.Get("project").String() == project) {
			n++
		}
		return true
	})
	return n
}

func sameDay(a, b time.Time) bool {
	y1, m1, d1 := a.Local().Date()
	y2, m2, d2 := b.Local().Date()
	return y1 == y2 && m1 == m2 && d1 == d2
}

// NoticeLine is the notice for n waiting candidates.
func NoticeLine(n int) string {
	things := "things"
	if n == 1 {
		things = "thing"
	}
	return fmt.Sprintf("synaxi learned %d %s it may apply from now on — /synaxi:review", n, things)
}
