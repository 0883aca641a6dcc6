package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"testing"
	"time"

	"github.com/synaxi/synaxi/internal/testbin"
)

// BenchmarkHookReturn times whole synaxi-ingest processes as Claude Code
// runs the SessionEnd hook (JSON on stdin, stdout and stderr through
// pipes): from spawn until the process exits, with the detached drain it
// starts left running. The floor is `sh -c true` spawned the same way in
// the same run. Reports p50 and p99 in milliseconds; the goal is a p99
// under 50 ms.
func BenchmarkHookReturn(b *testing.B) {
	w := newWorld(b)
	path := copyAs(b, w.root, "bench")
	in, _ := json.Marshal(map[string]string{"session_id": "bench", "transcript_path": path,
		"cwd": w.root, "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"})
	for _, c := range []struct {
		name string
		argv []string
		env  []string
	}{
		{"floor", []string{"sh", "-c", "true"}, nil},
		{"hook-disabled", []string{bin}, []string{"SYNAXI_INGEST_ENABLED=false"}},
		{"hook", []string{bin}, nil},
	} {
		b.Run(c.name, func(b *testing.B) {
			testbin.Time(b, func() *exec.Cmd {
				cmd := exec.Command(c.argv[0], c.argv[1:]...)
				cmd.Env = append(append([]string(nil), w.env...), c.env...)
				cmd.Stdin = bytes.NewReader(in)
				return cmd
			}, nil)
		})
	}
	// Let the last drains finish before the temporary directory goes.
	for i := 0; i < 600 && w.drainRunning(); i++ {
		time.Sleep(50 * time.Millisecond)
	}
}
