package extract

import (
	"slices"
	"testing"
)

// What the external tests (package extract_test) need of this package's
// test helpers: they run the extractor inside the whole pipeline, and
// package pipeline imports this one.
var (
	SharedFixtures = sharedFixtures
	Session        = session
	ThreeMB        = threeMB
)

// Labelled is the hand-labelled set under dir: its transcripts, each once
// and in the order the labels first name them, and each turn's label by
// message uuid.
func Labelled(t *testing.T, dir string) (files []string, label map[string]string) {
	label = map[string]string{}
	for _, r := range readLabelled(t, dir) {
		label[r.uuid] = r.label
		if !slices.Contains(files, r.file) {
			files = append(files, r.file)
		}
	}
	return files, label
}
