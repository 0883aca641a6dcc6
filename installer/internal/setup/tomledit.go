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
// touching no other line. The result must load as a valid config, or the
// edit is refused (for example when the file spells the table with dotted
// keys).
func addPreviousCommand(src []byte, line string) ([]byte, error) {
	var out []byte
	switch {
	case len(bytes.TrimSpace(src)) == 0:
		out = []byte("# synaxi configuration: `synaxi doctor` lists every key.\n\n[statusline]\n" + line + "\n")
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
			out = []byte(s + "\n[statusline]\n" + line + "\n")
		} else {
			var b strings.Builder
			for i, l := range lines {
				b.WriteString(l)
				if i == at {
					if !strings.HasSuffix(l, "\n") {
						b.WriteString("\n")
					}
					b.WriteString(line + "\n")
				}
			}
			out = []byte(b.String())
		}
	}
	if err := validConfig(out); err != nil {
		return nil, err
	}
	return out, nil
}

// removeLine deletes the first line equal to line (ignoring surrounding
// space), and reports whether it found one.
func removeLine(src []byte, line string) ([]byte, bool) {
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
