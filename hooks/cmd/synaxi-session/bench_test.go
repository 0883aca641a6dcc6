package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/xdg"
	"github.com/synaxi/synaxi/learning/publish"
	"github.com/synaxi/synaxi/learning/store"

	"github.com/synaxi/synaxi/internal/testbin"
)

// BenchmarkStartGuidance times `synaxi-session start` as a whole process
// (SessionStart JSON on stdin, stdout and stderr through pipes, not routed
// to the proxy), with no profile and with a published profile of 300
// entries over five projects, whose guidance it prints; p50 and p99 in ms.
func BenchmarkStartGuidance(b *testing.B) {
	root := b.TempDir()
	repo := filepath.Join(root, "repo")
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		b.Fatal(err)
	}
	in, _ := json.Marshal(map[string]string{"session_id": "bench", "transcript_path": filepath.Join(root, "t.jsonl"),
		"cwd": repo, "hook_event_name": "SessionStart", "source": "startup"})
	for _, c := range []struct {
		name    string
		entries int
	}{{"no-profile", 0}, {"profile-300", 300}} {
		b.Run(c.name, func(b *testing.B) {
			home := filepath.Join(root, c.name)
			d := xdg.Dirs{State: filepath.Join(home, "state", "synaxi"), Data: filepath.Join(home, "data", "synaxi"),
				Config: filepath.Join(home, "config", "synaxi")}
			if c.entries > 0 {
				benchProfile(b, d, repo, c.entries)
			}
			env := append(os.Environ(), "XDG_STATE_HOME="+filepath.Join(home, "state"), "XDG_DATA_HOME="+filepath.Join(home, "data"),
				"XDG_CONFIG_HOME="+filepath.Join(home, "config"), "ANTHROPIC_BASE_URL=")
			testbin.Time(b, func() *exec.Cmd {
				cmd := exec.Command(built, "start")
				cmd.Env = env
				cmd.Stdin = bytes.NewReader(in)
				return cmd
			}, func(b *testing.B, out, errb []byte) {
				if (c.entries > 0) != bytes.Contains(out, []byte("additionalContext")) {
					b.Fatalf("unexpected output %q %s", out, errb)
				}
			})
		})
	}
}

// benchProfile saves n entries (a sixth global, the rest over repo and four
// other projects) and publishes them.
func benchProfile(b *testing.B, d xdg.Dirs, repo string, n int) {
	ts := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	var es []store.Entry
	for i := range n {
		scope, project := store.ScopeGlobal, ""
		if i%6 != 0 {
			scope, project = store.ScopeProject, repo
			if i%5 != 0 {
				project = fmt.Sprintf("%s-%d", repo, i%5)
			}
		}
		dim := store.Dimensions[i%len(store.Dimensions)]
		text := fmt.Sprintf("don't repeat mistake number %d in this code base", i)
		es = append(es, store.Entry{ID: store.NewID(scope, project, dim, text), Scope: scope, Project: project,
			Dimension: dim, Text: text, Weight: float64(i%10) / 10, Count: 1, Sessions: []string{"s"}, FirstSeen: ts, LastSeen: ts,
			State: store.Confirmed, ConfirmedBy: store.ByUser, ConfirmedAt: ts,
			Evidence: []store.Evidence{{Session: "0b7c1e2a-5f1d-4c3e-9a8b-00000000000" + fmt.Sprint(i%10), UUID: "u", Timestamp: ts,
				Quote: fmt.Sprintf("no, don't repeat mistake number %d, I told you before", i)}}})
	}
	if _, err := store.Open(store.Dir(d)).Update("bench", func(p *store.Profile) error {
		p.Entries = es
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	if _, err := publish.Publish(context.Background(), d, config.Default().Guidance, os.Getenv); err != nil {
		b.Fatal(err)
	}
}
