package replay

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/proxyd/internal/projection"
	"github.com/tidwall/gjson"
)

// Main is `synaxi-proxyd replay PATH… [--json|--markdown] [--scope S]
// [--budget N] [--threshold N] [--trim-tools] [--stub-tools]
// [--tools-from BODY.json] [--dump FILE]`: each PATH is a transcript or a directory of
// them (see Transcripts).
func Main(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the report as JSON (stable schema, see the package doc)")
	markdown := fs.Bool("markdown", false, "print the per-transcript table as Markdown")
	budget := fs.Int("budget", 0, "world budget in tokens (0: sized to the model, as projection.budget_tokens)")
	threshold := fs.Int("threshold", 0, "re-projection step in tokens (0: derived from the budget)")
	trim := fs.Bool("trim-tools", false, "trim tool schemas as projection.trim_tools does")
	stub := fs.Bool("stub-tools", config.Default().Projection.StubTools, "serve tools never called as stubs, as projection.stub_tools does (--stub-tools=false: as sent)")
	toolsFrom := fs.String("tools-from", "", "a captured request body whose tools both sides send instead of the recorded main session's")
	scope := fs.String("scope", DefaultScope(), "which conversations the gate hands to the projection, as the proxy's proxy.scope: all, worker or off")
	dumpPath := fs.String("dump", "", "write every simulated request (side, time, body, usage) as JSON lines to this file")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: synaxi-proxyd replay TRANSCRIPT.jsonl|DIR… [--json|--markdown] [--budget N] [--threshold N] [--trim-tools] [--stub-tools] [--tools-from BODY.json] [--scope all|worker|off] [--dump FILE]")
		fmt.Fprintln(stderr, "A directory stands for its *.jsonl files and those in every subagents/ directory below it.")
		fs.PrintDefaults()
	}
	// Flags may follow the transcript paths.
	var args1 []string
	rest := args
	for len(rest) > 0 {
		if err := fs.Parse(rest); err != nil {
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		args1 = append(args1, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if len(args1) == 0 {
		fs.Usage()
		return 2
	}
	paths, err := Transcripts(args1)
	if err != nil {
		fmt.Fprintf(stderr, "synaxi-proxyd replay: %v\n", err)
		return 1
	}
	if _, err := ScopeRule(*scope); err != nil {
		fmt.Fprintf(stderr, "synaxi-proxyd replay: --%v\n", err)
		return 2
	}
	opts := Options{Scope: *scope, Projection: projection.Config{BudgetTokens: *budget, ThresholdTokens: *threshold, TrimTools: *trim, StubTools: *stub}}
	if *toolsFrom != "" {
		b, err := os.ReadFile(*toolsFrom)
		if err == nil && !gjson.GetBytes(b, "tools").IsArray() {
			err = fmt.Errorf("%s has no \"tools\" array: give a captured Messages request body", *toolsFrom)
		}
		if err != nil {
			fmt.Fprintf(stderr, "synaxi-proxyd replay: --tools-from: %v\n", err)
			return 2
		}
		for _, t := range gjson.GetBytes(b, "tools").Array() {
			opts.Tools = append(opts.Tools, json.RawMessage(t.Raw))
		}
	}
	if *dumpPath != "" {
		f, err := os.Create(*dumpPath)
		if err != nil {
			fmt.Fprintf(stderr, "synaxi-proxyd replay: %v\n", err)
			return 1
		}
		defer f.Close()
		bw := bufio.NewWriter(f)
		defer bw.Flush()
		opts.Dump = bw
	}
	var rep *Report
	if len(paths) == 1 {
		rep, err = Run(context.Background(), paths[0], opts, nil)
		if err == nil {
			row := *rep
			rep.Rows = []*Report{&row}
		}
	} else {
		rep, err = RunPanel(context.Background(), paths, opts)
	}
	if err != nil {
		fmt.Fprintf(stderr, "synaxi-proxyd replay: %v\n", err)
		return 1
	}
	switch {
	case *asJSON:
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(stderr, "synaxi-proxyd replay: %v\n", err)
			return 1
		}
	case *markdown:
		rep.Markdown(stdout)
	case len(paths) == 1:
		rep.Table(stdout)
	default:
		rep.PanelTable(stdout)
	}
	return 0
}

// Table prints the report as a plain table.
func (r *Report) Table(w io.Writer) {
	fmt.Fprintf(w, "transcript: %s\nrequests: %d  budget: %d tokens  threshold: %d tokens\n\n", r.Transcript, r.Requests, r.BudgetTokens, r.ThresholdTokens)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tbaseline\tprojected\t")
	row := func(name string, b, p any) { fmt.Fprintf(tw, "%s\t%v\t%v\t\n", name, b, p) }
	row("raw context tokens", r.Baseline.RawTokens, r.Projected.RawTokens)
	row("cache write", r.Baseline.CacheWrite, r.Projected.CacheWrite)
	row("cache read", r.Baseline.CacheRead, r.Projected.CacheRead)
	row("uncached input", r.Baseline.Uncached, r.Projected.Uncached)
	row("billed-equivalent input", fmt.Sprintf("%.0f", r.Baseline.BilledEquivalent), fmt.Sprintf("%.0f", r.Projected.BilledEquivalent))
	row("cache-hit ratio", fmt.Sprintf("%.3f", r.Baseline.CacheHitRatio), fmt.Sprintf("%.3f", r.Projected.CacheHitRatio))
	row("invalid requests", r.Baseline.InvalidRequests, r.Projected.InvalidRequests)
	row("prefix violations", "-", deref(r.Projected.PrefixViolations))
	row("re-projections", "-", deref(r.Projected.Reprojections))
	row("tool list restored", "-", r.Projected.RosterChanges)
	tw.Flush()
	fmt.Fprintf(w, "\nraw context %.2f× below baseline; billed-equivalent input %.2f× below baseline\n", r.RawReduction, r.BilledReduction)
	fmt.Fprintf(w, "new content %d tokens: projected hit ratio at most %.3f at this raw context, %.3f at %.1f× below baseline\n",
		r.NewContentTokens, r.HitCeiling, r.HitCeilingAtTargetRaw, TargetRawReduction)
	fmt.Fprintf(w, "had it stopped earlier: billed %.2f× below baseline at worst (after request %d); %d of %d stopping points cost more\n",
		r.WorstStop, r.WorstStopRequest, r.CostlierStops, r.Requests)
	fmt.Fprintf(w, "edits whose old text the request did not show (a re-read the billed figures leave out): %d projected, %d baseline\n",
		r.Projected.BlindEdits, r.Baseline.BlindEdits)
	fmt.Fprintf(w, "with a re-read before each (%d projected, %d baseline): billed-equivalent input %.2f× below baseline\n",
		r.Projected.Rereads, r.Baseline.Rereads, r.BilledReductionWithRereads)
	n := r.Projected.HiddenThenNeeded
	fmt.Fprintf(w, "hidden then needed (projected): %d edits, %d reads, %d commands, %d symbols, %d quotes; %d recoveries, %d tokens read again\n",
		n.Edits, n.Reads, n.Commands, n.Symbols, n.Quotes, r.Projected.Recoveries, n.RecoveryTokens)
	fmt.Fprintf(w, "with every recovery priced: billed-equivalent input %.2f× below baseline (never costlier: %v)\n",
		r.BilledReductionWithRecovery, r.NeverCostlier)
	fmt.Fprintf(w, "the session's bound: %.2f× below baseline; the projection reaches %.2f of it (%.2f with the re-reads alone priced)\n",
		r.BoundReduction, r.BoundShare, r.BoundShareWithRereads)
	fmt.Fprintf(w, "user-typed content hidden: %d", r.Projected.UserTypedHidden)
	if r.Projected.FirstUserTypedHidden != "" {
		fmt.Fprintf(w, " (first: %q)", r.Projected.FirstUserTypedHidden)
	}
	fmt.Fprintf(w, "\nscope: %s", r.Scope)
	if r.TooLittleHistory {
		fmt.Fprint(w, "; too little history: the engine engaged on no request")
	}
	fmt.Fprintln(w)
	if s := r.repairs(); s != "" {
		fmt.Fprintf(w, "rebuilt requests: %s\n", s)
	}
}

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}
