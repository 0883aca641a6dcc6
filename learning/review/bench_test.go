package review

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/synaxi/synaxi/internal/xdg"
	"github.com/synaxi/synaxi/learning/store"
)

// BenchmarkNotice is what the notice adds to every SessionStart when no
// candidate waits: the profile read and the count over 300 entries.
func BenchmarkNotice(b *testing.B) {
	root := b.TempDir()
	d := xdg.Dirs{State: filepath.Join(root, "state"), Data: filepath.Join(root, "data")}
	s := store.Open(store.Dir(d))
	_, err := s.Update("bench", func(p *store.Profile) error {
		for i := range 300 {
			text := fmt.Sprintf("never repeat mistake number %d", i)
			e := store.Entry{ID: fmt.Sprint("e", i), Scope: store.ScopeProject, Project: fmt.Sprint("/p", i%5), Dimension: store.Guards,
				Text: text, Weight: 0.5, Count: 1, Sessions: []string{"s"}, FirstSeen: t0, LastSeen: t0,
				State: store.Confirmed, ConfirmedBy: store.ByUser, ConfirmedAt: t0,
				Evidence: []store.Evidence{{Session: "s", UUID: "u", Timestamp: t0, Quote: "no, " + text + ", I told you before"}}}
			p.Entries = append(p.Entries, e)
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	for b.Loop() {
		if line, err := Notice(d, "/p1", now); err != nil || line != "" {
			b.Fatal(line, err)
		}
	}
}
