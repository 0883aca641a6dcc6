package statusline

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// DepthEnv guards against a previous command that is synaxi's own status
// line (directly or through a wrapper): it is set for the child, and a
// status line that sees it does not compose again.
const DepthEnv = "SYNAXI_STATUSLINE_NESTED"

// RunPrevious runs the user's previous status line command through sh with
// the same stdin and returns its output lines (trailing blank lines
// dropped), even if it exits non-zero. A command that prints nothing or
// outlives the timeout yields nothing; its process group is killed then.
func RunPrevious(ctx context.Context, command string, stdin []byte, timeout time.Duration) []string {
	if strings.TrimSpace(command) == "" || os.Getenv(DepthEnv) != "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", command)
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Env = append(os.Environ(), DepthEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 50 * time.Millisecond
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Run(); err != nil && ctx.Err() != nil {
		return nil
	}
	text := strings.TrimRight(out.String(), "\r\n\t ")
	if text == "" {
		return nil
	}
	return strings.Split(text, "\n")
}
