package shellread

import (
	"path"
	"strings"
)

// globalGit are git subcommands that can rewrite any tracked file.
var globalGit = map[string]bool{
	"checkout": true, "switch": true, "restore": true, "reset": true, "stash": true, "apply": true,
	"am": true, "merge": true, "rebase": true, "pull": true, "cherry-pick": true, "revert": true,
	"clean": true, "mv": true, "rm": true,
}

// statementEdits returns the files a statement may change, and whether it
// may change files it does not name.
func statementEdits(s statement, dir string) ([]string, bool) {
	var (
		edits  []string
		global bool
	)
	add := func(t token) {
		if p, ok := resolve(dir, t); ok {
			if !special(p) {
				edits = append(edits, p)
			}
			return
		}
		global = true // an unknown target: it could be any file
	}
	for _, st := range s.stages {
		for _, r := range st.redirects {
			switch r.op {
			case ">", ">>", ">|", "&>", "&>>", "<>":
				add(r.target)
			case ">&":
				if !isDigits(r.target.text) && r.target.text != "-" {
					add(r.target)
				}
			}
		}
		name, args := command(st.words)
		e, g := commandEdits(name, args, dir)
		for _, t := range e {
			add(t)
		}
		global = global || g
	}
	return edits, global
}

// editor returns the operands a command writes, and whether it may change
// files it does not name.
type editor func(args []token, dir string) ([]token, bool)

// editors knows which commands write which of their operands. It is filled
// in init because some entries (xargs, find, sh -c) recurse into it.
var editors map[string]editor

func init() {
	editors = map[string]editor{
		"tee":      allOperands(noValues),
		"sed":      sedEdits,
		"perl":     perlEdits,
		"ruby":     perlEdits,
		"mv":       copyEdits(true),
		"cp":       copyEdits(false),
		"install":  copyEdits(false),
		"ln":       copyEdits(false),
		"rsync":    copyEdits(false),
		"scp":      copyEdits(false),
		"rm":       allOperands(noValues),
		"unlink":   allOperands(noValues),
		"shred":    allOperands(noValues),
		"touch":    allOperands(map[string]bool{"-d": true, "-t": true, "-r": true, "--date": true, "--reference": true}),
		"truncate": allOperands(map[string]bool{"-s": true, "--size": true, "-r": true, "--reference": true}),
		"dd":       ddEdits,
		"git":      func(args []token, _ string) ([]token, bool) { return nil, globalGit[gitSubcommand(args)] },
		"xargs":    xargsEdits,
		"find":     findEdits,
	}
	for _, name := range []string{"python", "python3", "node", "deno", "bun", "php"} {
		editors[name] = func(args []token, _ string) ([]token, bool) { return nil, inlineWrites(args) }
	}
	for _, name := range []string{"patch", "apply_patch", "applypatch", "black", "isort", "rustfmt", "autoflake", "pyupgrade"} {
		editors[name] = func([]token, string) ([]token, bool) { return nil, true }
	}
	for _, name := range []string{"gofmt", "goimports", "prettier", "eslint", "ruff", "clang-format", "autopep8", "yapf", "biome", "dprint"} {
		editors[name] = formatterEdits
	}
	for _, name := range []string{"go", "cargo", "terraform", "dotnet"} {
		editors[name] = toolchainEdits
	}
	for _, name := range []string{"npx", "bunx", "pnpx", "uvx", "pipx"} {
		editors[name] = func(args []token, dir string) ([]token, bool) {
			n, rest := command(args)
			return commandEdits(n, rest, dir)
		}
	}
	for _, name := range []string{"sh", "bash", "zsh", "dash"} {
		editors[name] = shellEdits
	}
}

// commandEdits returns the operands a command writes, and whether it may
// change files it does not name.
func commandEdits(name string, args []token, dir string) ([]token, bool) {
	if e, ok := editors[name]; ok {
		return e(args, dir)
	}
	return nil, false
}

// allOperands is a command that writes every operand.
func allOperands(values map[string]bool) editor {
	return func(args []token, _ string) ([]token, bool) {
		_, ops := operands(args, values)
		return ops, false
	}
}

func sedEdits(args []token, _ string) ([]token, bool) {
	flags, ops := operands(args, sedValues)
	inPlace, scripted := false, false
	for _, f := range flags {
		switch {
		case f.name == "-e" || f.name == "--expression" || f.name == "-f" || f.name == "--file":
			scripted = true
		case strings.HasPrefix(f.name, "--in-place"):
			inPlace = true
		case !strings.HasPrefix(f.name, "--") && strings.Contains(f.name, "i"):
			inPlace = true
		}
	}
	if !inPlace {
		return nil, false
	}
	if !scripted && len(ops) > 0 {
		ops = ops[1:]
	}
	return ops, false
}

func perlEdits(args []token, _ string) ([]token, bool) {
	inPlace, code := false, false
	var files []token
	for i := 0; i < len(args); i++ {
		a := args[i].text
		if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") {
			inPlace = inPlace || strings.Contains(a, "i")
			if strings.HasSuffix(a, "e") || strings.HasSuffix(a, "E") {
				code = true
				i++ // the program text
			}
			continue
		}
		if !code && len(files) == 0 && !inPlace {
			code = true // the script file
			continue
		}
		files = append(files, args[i])
	}
	if inPlace {
		return files, false
	}
	return nil, inlineWrites(args)
}

// copyEdits is mv, cp and their kin: the target, each source's copy inside
// it, and for mv the sources themselves.
func copyEdits(moves bool) editor {
	values := map[string]bool{"-t": true, "--target-directory": true, "-S": true,
		"--suffix": true, "-m": true, "--mode": true, "-o": true, "-g": true}
	return func(args []token, _ string) ([]token, bool) {
		flags, ops := operands(args, values)
		var target token
		sources := ops
		for _, f := range flags {
			if f.name == "-t" || f.name == "--target-directory" {
				target = token{text: f.value}
			}
		}
		if target.text == "" {
			if len(ops) < 2 {
				return ops, false
			}
			target, sources = ops[len(ops)-1], ops[:len(ops)-1]
		}
		out := []token{target}
		if moves {
			out = append(out, sources...)
		}
		for _, src := range sources {
			if !src.dynamic && !target.dynamic {
				out = append(out, token{text: path.Join(target.text, path.Base(src.text))})
			}
		}
		return out, false
	}
}

func ddEdits(args []token, _ string) ([]token, bool) {
	var out []token
	for _, a := range args {
		if strings.HasPrefix(a.text, "of=") {
			out = append(out, token{text: a.text[3:], dynamic: a.dynamic})
		}
	}
	return out, false
}

func formatterEdits(args []token, _ string) ([]token, bool) {
	for _, a := range args {
		switch a.text {
		case "-w", "--write", "--fix", "format", "-i", "--in-place", "--apply", "fmt":
			return nil, true
		}
	}
	return nil, false
}

func toolchainEdits(args []token, _ string) ([]token, bool) {
	if len(args) > 0 {
		switch args[0].text {
		case "fmt", "generate", "fix", "format", "mod":
			return nil, true
		}
	}
	return nil, false
}

// shellEdits is `sh -c SCRIPT`: the script's own edits.
func shellEdits(args []token, dir string) ([]token, bool) {
	for i, a := range args {
		if a.text == "-c" && i+1 < len(args) {
			if args[i+1].dynamic {
				return nil, true
			}
			an := Parse(args[i+1].text, dir)
			var out []token
			for _, e := range an.Edits {
				out = append(out, token{text: e})
			}
			return out, an.Global
		}
	}
	return nil, false
}

// xargsValues are xargs options that take a value as the next argument.
var xargsValues = map[string]bool{"-a": true, "--arg-file": true, "-d": true, "--delimiter": true,
	"-E": true, "-I": true, "-L": true, "-n": true, "--max-args": true, "-P": true, "--max-procs": true,
	"-s": true, "--max-chars": true, "--process-slot-var": true}

// xargsEdits is `xargs [options] COMMAND ARGS…`: COMMAND runs with more
// arguments read from stdin, which are unknown here, so a command that
// writes its operands may write any file.
func xargsEdits(args []token, dir string) ([]token, bool) {
	repl, i := "", 0
	for i < len(args) {
		a := args[i].text
		if a == "--" {
			i++
			break
		}
		if len(a) < 2 || a[0] != '-' {
			break
		}
		switch {
		case a == "-I" && i+1 < len(args):
			repl = args[i+1].text
		case a == "-i" || a == "--replace":
			repl = "{}"
		case strings.HasPrefix(a, "-I"), strings.HasPrefix(a, "-i"):
			repl = a[2:]
		case strings.HasPrefix(a, "--replace="):
			repl = a[len("--replace="):]
		}
		if xargsValues[a] {
			i++
		}
		i++
	}
	rest := substitute(args[min(i, len(args)):], repl)
	if len(rest) == 0 {
		return nil, false // echo
	}
	name, cmdArgs := command(rest)
	if repl == "" {
		cmdArgs = append(cmdArgs[:len(cmdArgs):len(cmdArgs)], dyn)
	}
	return commandEdits(name, cmdArgs, dir)
}

// findEdits is find's actions that change files: -delete removes what
// matched (unknown here), -exec and -ok run a command on each match, and
// -fprint and its kin write a named file.
func findEdits(args []token, dir string) ([]token, bool) {
	var (
		out    []token
		global bool
	)
	for i := 0; i < len(args); i++ {
		switch args[i].text {
		case "-delete":
			global = true
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(args) && args[j].text != ";" && args[j].text != "+" {
				j++
			}
			name, cmdArgs := command(substitute(args[i+1:j], "{}"))
			e, g := commandEdits(name, cmdArgs, dir)
			out = append(out, e...)
			global = global || g
			i = j
		case "-fprint", "-fprint0", "-fprintf", "-fls":
			if i+1 < len(args) {
				out = append(out, args[i+1])
				i++
			}
		}
	}
	return out, global
}

// substitute marks the arguments holding the placeholder xargs or find
// replaces with each input as unknown.
func substitute(args []token, placeholder string) []token {
	if placeholder == "" {
		return args
	}
	out := make([]token, len(args))
	for i, a := range args {
		out[i] = a
		if strings.Contains(a.text, placeholder) {
			out[i] = dyn
		}
	}
	return out
}

// gitSubcommand skips git's global options (-C dir, -c key=value, …).
func gitSubcommand(args []token) string {
	for i := 0; i < len(args); i++ {
		a := args[i].text
		switch {
		case a == "-C" || a == "-c" || a == "--git-dir" || a == "--work-tree" || a == "--namespace":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			return a
		}
	}
	return ""
}

// inlineWrites reports inline interpreter code (-c/-e) that writes files.
func inlineWrites(args []token) bool {
	for i, a := range args {
		if (a.text == "-c" || a.text == "-e" || a.text == "--eval") && i+1 < len(args) {
			code := args[i+1].text
			for _, m := range []string{".write(", "write_text", "write_bytes", "writeFile", "'w'", `"w"`,
				"'a'", `"a"`, "'wb'", `"wb"`, "unlink", "rename(", "remove(", "rmtree", "os.replace"} {
				if strings.Contains(code, m) {
					return true
				}
			}
		}
	}
	return false
}
