package setup

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/synaxi/synaxi/installer/internal/journal"
	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/hint"
)

// configLine is the config.toml line `key = value`, value a TOML string.
func configLine(key, value string) (string, error) {
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(map[string]string{key: value}); err != nil {
		return "", fmt.Errorf("encode %s: %w", key, err)
	}
	return strings.TrimRight(b.String(), "\n"), nil
}

// addToTable adds line to [table] of a config.toml, touching no other
// line, and returns the new file and the exact text it inserted. The
// result must still parse, or the edit is refused.
func addToTable(src []byte, table, line string) (out []byte, added string, err error) {
	header := "[" + table + "]"
	switch {
	case len(bytes.TrimSpace(src)) == 0:
		out = []byte("# synaxi configuration: `synaxi doctor` lists every key.\n\n" + header + "\n" + line + "\n")
		added = line + "\n"
	default:
		lines := strings.SplitAfter(string(src), "\n")
		at := -1
		for i, l := range lines {
			if strings.TrimSpace(l) == header {
				at = i
				break
			}
		}
		if at < 0 {
			s := string(src)
			if !strings.HasSuffix(s, "\n") {
				s += "\n"
			}
			added = "\n" + header + "\n" + line + "\n"
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
		if l != "" && !strings.HasPrefix(l, "[") {
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
		return fmt.Errorf("config.toml would not parse after the edit: %w", err)
	}
	return nil
}

// addConfigLine adds `key = value` to [table] of config.toml, whose bytes
// are src, journaled like every change: the file backed up, the added text
// recorded (uninstall takes out that text alone), then written.
func (in *installer) addConfigLine(src []byte, table, key, value, why string) error {
	p := in.dirs.ConfigFile()
	line, err := configLine(key, value)
	if err != nil {
		return err
	}
	out, added, err := addToTable(src, table, line)
	if err != nil {
		return hint.Wrap(fmt.Errorf("%s: %w", p, err), "add `"+line+"` under ["+table+"] yourself")
	}
	if err := in.j.MkdirAll(filepath.Dir(p), in.record); err != nil {
		return err
	}
	f, err := in.j.Backup(in.jdir, p)
	if err != nil {
		return err
	}
	if !slices.Contains(f.Lines, added) {
		f.Lines = append(f.Lines, added)
	}
	f.Wrote(out, why)
	if err := in.record(); err != nil {
		return err
	}
	return journal.WriteFile(p, out, modeOf(p))
}
