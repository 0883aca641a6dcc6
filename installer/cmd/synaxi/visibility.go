package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/synaxi/synaxi/internal/cmdline"

	"github.com/synaxi/synaxi/internal/visibility"
	"github.com/synaxi/synaxi/internal/visibility/remote"
)

// runVisibility is the hidden `synaxi visibility [-timeout D] BASE SESSION
// [AGENT]` the no-reread hook runs to ask a proxy on another machine for a
// context's visibility export (internal/visibility/remote), sending the
// headers in ANTHROPIC_CUSTOM_HEADERS. It prints the export as JSON; on any
// failure it prints nothing and exits 1, and the hook allows the read.
func runVisibility(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := cmdline.Flags("visibility", stderr)
	timeout := fs.Duration("timeout", remote.DefaultTimeout, "bound on the HTTP call")
	if fs.Parse(args) != nil || fs.NArg() < 2 || fs.NArg() > 3 {
		fmt.Fprintln(stderr, "usage: synaxi visibility [-timeout D] BASE-URL SESSION [AGENT] (run by synaxi-noreread)")
		return 2
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	e, err := remote.Get(ctx, nil, fs.Arg(0), fs.Arg(1), fs.Arg(2), visibility.CustomHeaders(os.Getenv("ANTHROPIC_CUSTOM_HEADERS")))
	if err != nil {
		return cmdline.Fail(stderr, err)
	}
	if err := json.NewEncoder(stdout).Encode(e); err != nil {
		return cmdline.Fail(stderr, err)
	}
	return 0
}
