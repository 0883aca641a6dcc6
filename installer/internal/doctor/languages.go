package doctor

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/synaxi/synaxi/installer/internal/setup"
)

// languagesTimeout bounds asking synaxi-mapgen for its languages.
const languagesTimeout = 10 * time.Second

// checkLanguages asks the installed synaxi-mapgen (built the same way as
// synaxi-mcp, which serves the maps) which languages it parses. A build
// without cgo parses Go only; doctor names what it lacks instead of letting
// maps of a Rust or TypeScript repository come back empty.
func checkLanguages(ctx context.Context, f *facts) Check {
	const name = "map languages"
	bin := filepath.Join(setup.BinDir(f.d), "synaxi-mapgen")
	rebuild := setup.RebuildHint()
	ctx, cancel := context.WithTimeout(ctx, languagesTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "languages", "--json").Output()
	if err != nil {
		return warns(name, fmt.Sprintf("cannot ask %s languages: %v", bin, err), rebuild)
	}
	var rep struct {
		Parsed  []string `json:"parsed"`
		Missing []string `json:"missing"`
	}
	if err := json.Unmarshal(out, &rep); err != nil || len(rep.Parsed) == 0 {
		return warns(name, bin+" languages --json printed no language list (a build older than the languages command?)", rebuild)
	}
	if len(rep.Missing) > 0 {
		return warns(name, fmt.Sprintf("parses %s only; cannot parse %s (built without cgo): maps leave those files out and say so",
			strings.Join(rep.Parsed, ", "), strings.Join(rep.Missing, ", ")), cgoFix())
	}
	return pass(name, "parses "+strings.Join(rep.Parsed, ", "))
}

// cgoFix says how to get every language: rebuild with a C compiler in a
// checkout; a release archive built without cgo cannot be fixed locally.
func cgoFix() string {
	if setup.Checkout() != "" {
		return "rebuild with a C compiler (cc or gcc on PATH): " + setup.RebuildHint()
	}
	return "this copy of synaxi was built without cgo, so it cannot parse them; releases are built with cgo: `claude plugin update synaxi@synaxi` fetches the current one for your platform"
}
