package setup

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/synaxi/synaxi/internal/config"
)

// previousCommandLine is the config.toml line that records the user's own
// status line command.
func previousCommandLine(cmd string) (string, error) {
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(map[string]string{"previous_command": cmd}); err != nil {
		return "", fmt.Errorf("encode previous_command: %w", err)
	}
	return strings.TrimRight(b.String(), "\n"), nil
}

// addPreviousCommand adds line to the [statusline] table of a config.toml,
// touching no other line, and returns the new file and the exact text it
// inserted. The result must still parse, or the edit is refused.
func addPreviousCommand(src []byte, line string) (out []byte, added string, err error) {
	switch {
	case len(bytes.TrimSpace(src)) == 0:
		out = []byte("# synaxi configuration: `synaxi doctor` lists every key.\n\n[statusline]\n" + line + "\n")
		added = line + "\n"
	default:
		lines := strings.SplitAfter(string(src), "\n")
		at := -1
		for i, l := range lines {
			if strings.TrimSpace(l) == "[statusline]" {
				at = i
				break
			}
		}
		if at < 0 {
			s := string(src)
			if !strings.HasSuffix(s, "\n") {
				s += "\n"
			}
			added = "\n[statusline]\n" + line + "\n"
			out = []byte(s + added)
		} else {
			var b strings.Builder
			for i, l := range lines {
				b.WriteString(l)
				if i == at {
					if !strings.HasSuffix(l, "\n") {
						b.WriteString("\n")
					}
					b.WriteString(line + "\n")
					added = line + "\n"
				}
			}
			out = []byte(b.String())
		}
	}
	if err := validConfig(out); err != nil {
		return nil, "", err
	}
	return out, added, nil
}

// removeAdded takes out text install added: the exact block if it is still
// there, else the first line equal to its key line (ignoring surrounding
// space). It reports whether it found either.
func removeAdded(src []byte, added string) ([]byte, bool) {
	if i := bytes.Index(src, []byte(added)); i >= 0 {
		return append(src[:i:i], src[i+len(added):]...), true
	}
	line := ""
	for _, l := range strings.Split(added, "\n") {
		if strings.HasPrefix(l, "previous_command") {
			line = l
		}
	}
	lines := strings.SplitAfter(string(src), "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) == line {
			return []byte(strings.Join(append(lines[:i:i], lines[i+1:]...), "")), true
		}
	}
	return src, false
}

// configPreviousCommand returns previous_command as written in the file.
func configPreviousCommand(src []byte) (string, error) {
	var c struct {
		StatusLine struct {
			PreviousCommand string `toml:"previous_command"`
		} `toml:"statusline"`
	}
	if _, err := toml.Decode(string(src), &c); err != nil {
		return "", fmt.Errorf("parse config.toml: %w", err)
	}
	return c.StatusLine.PreviousCommand, nil
}

func validConfig(src []byte) error {
	var c config.Config
	if _, err := toml.Decode(string(src), &c); err != nil {
		return fmt.Errorf("config.toml would not parse after adding previous_command: %w", err)
	}
	return nil
}
