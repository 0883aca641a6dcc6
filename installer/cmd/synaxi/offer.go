package main

import (
	"fmt"
	"io"
	"os"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/xdg"
	"github.com/synaxi/synaxi/learning/extract"
)

// offerModelExtractor says, after install, while learning uses the
// embedded rules, that the user's own claude CLI can extract instead, with
// the most a session can cost under the configured token cap. It lives in
// main, which wires learning to the installer; setup knows nothing of it.
func offerModelExtractor(w io.Writer) {
	d := xdg.Resolve()
	l, err := config.Load(d.ConfigFile(), os.Getenv)
	if err != nil || l.Config.Ingest.Extractor != "embedded" && l.Config.Ingest.Extractor != "" {
		return
	}
	model := l.Config.Ingest.Model
	if model == "" {
		model = "haiku"
	}
	c := extract.Cap(l.Config.Ingest.MaxTokens)
	fmt.Fprintf(w, "learning: the embedded rules (no network) learn from what you type. Your own claude CLI can do it instead, in any language:\n"+
		"  %s, at most %d tokens a session (at most $%.3f a session at its list price);\n"+
		"  set ingest.extractor = \"claude\" in %s (ingest.max_tokens sets the cap)\n", model, int(c), c.USD(model), d.ConfigFile())
}
