// Package launcher is the Go half of the plugin's launcher
// (plugin/bin/synaxi-run, docs/launcher.md): what the shell leaves to the
// installed binaries once a release is in DATA/bin.
//
// The shell keeps only what must run before any binary exists: resolve a
// binary, exec it, and the first download (verify its SHA-256, unpack,
// rename the version directory into place), recording a failed attempt in
// DATA/bin/.V.failed. Everything after a successful install runs here, from
// the just-installed `synaxi launcher installed`: the `current` switch and
// the pruning of other versions. The failure record is read here too, by
// `synaxi doctor`, so its format has one reader in Go.
//
// Invariants: `current` is replaced by one rename, never removed first; a
// version directory is pruned only when no plugin copy of that version is
// left in Claude Code's cache and no running process's executable lives in
// it; nothing is pruned outside Claude Code's plugin cache, where there is no
// way to tell which versions are installed.
package launcher

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Failure is one record DATA/bin/.V.failed: the last failed attempt to
// install version V. The launcher writes it as "EPOCH ATTEMPTS KIND" and,
// on the next line, the sentence the user sees.
type Failure struct {
	Version  string
	When     time.Time
	Attempts int
	Kind     string // "download", "checksum" (never retried for V) or "setup"
	Sentence string
}

// KindChecksum is the failure kind no retry mends: a whole, valid archive
// whose SHA-256 is not the one checksums.txt names. Only a plugin update does.
const KindChecksum = "checksum"

// failedSuffix ends a failure record's name, .V.failed.
const failedSuffix = ".failed"

// ParseFailure reads a failure record's text.
func ParseFailure(version string, data []byte) (Failure, error) {
	head, sentence, _ := strings.Cut(strings.TrimSpace(string(data)), "\n")
	f := strings.Fields(head)
	if len(f) != 3 {
		return Failure{}, fmt.Errorf("failure record of %s: want \"EPOCH ATTEMPTS KIND\", got %q", version, head)
	}
	when, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return Failure{}, fmt.Errorf("failure record of %s: epoch: %w", version, err)
	}
	attempts, err := strconv.Atoi(f[1])
	if err != nil {
		return Failure{}, fmt.Errorf("failure record of %s: attempts: %w", version, err)
	}
	return Failure{Version: version, When: time.Unix(when, 0), Attempts: attempts, Kind: f[2],
		Sentence: strings.TrimSpace(sentence)}, nil
}

// Failures lists the failure records in the launcher's bin directory bin
// whose version is still not installed (a later attempt may have succeeded
// while the record stayed). Unreadable or malformed records are skipped: the
// launcher rewrites them at its next attempt.
func Failures(bin string) []Failure {
	records, _ := filepath.Glob(filepath.Join(bin, ".*"+failedSuffix))
	var out []Failure
	for _, rec := range records {
		version := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(rec), "."), failedSuffix)
		if _, err := os.Stat(filepath.Join(bin, version)); err == nil {
			continue
		}
		data, err := os.ReadFile(rec)
		if err != nil {
			continue
		}
		if f, err := ParseFailure(version, data); err == nil && f.Sentence != "" {
			out = append(out, f)
		}
	}
	return out
}
