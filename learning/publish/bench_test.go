package publish

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/xdg"
	"github.com/synaxi/synaxi/learning/store"
)

// benchProfile stores a profile of 300 entries over five projects and
// global, published, the size of months of sessions.
func benchProfile(b *testing.B) (xdg.Dirs, string) {
	root := b.TempDir()
	d := xdg.Dirs{Data: filepath.Join(root, "data"), State: filepath.Join(root, "state")}
	var es []store.Entry
	for i := range 300 {
		scope, project := store.ScopeGlobal, ""
		if i%6 != 0 {
			scope, project = store.ScopeProject, fmt.Sprintf("/src/project-%d", i%5)
		}
		dim := store.Dimensions[i%len(store.Dimensions)]
		es = append(es, entry(scope, project, dim, fmt.Sprintf("don't repeat mistake number %d in this code base", i), float64(i%10)/10,
			fmt.Sprintf("no, don't repeat mistake number %d, I told you before", i)))
	}
	if _, err := store.Open(store.Dir(d)).Update("bench", func(p *store.Profile) error {
		p.Entries = es
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	if _, err := Publish(context.Background(), d, config.Default().Guidance, func(string) string { return "" }); err != nil {
		b.Fatal(err)
	}
	return d, "/src/project-3"
}

// BenchmarkForSession is the SessionStart hook's guidance work: read the
// profile version and the published narrative, render within the cap.
func BenchmarkForSession(b *testing.B) {
	d, project := benchProfile(b)
	cfg := config.Default().Guidance
	b.ResetTimer()
	for b.Loop() {
		s, err := ForSession(d, cfg, project)
		if err != nil || s == "" {
			b.Fatal(err, s)
		}
	}
}

// BenchmarkPublish is what the drain adds after each profile update with
// the default configuration (narratives only, no writers).
func BenchmarkPublish(b *testing.B) {
	d, _ := benchProfile(b)
	cfg := config.Default().Guidance
	b.ResetTimer()
	for b.Loop() {
		if _, err := Publish(context.Background(), d, cfg, func(string) string { return "" }); err != nil {
			b.Fatal(err)
		}
	}
}
