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

// commandEdits knows which commands write which of their operands.
func commandEdits(name string, args []token, dir string) ([]token, bool) {
	switch name {
	case "":
		return nil, false
	case "tee":
		_, ops := operands(args, noValues)
		return ops, false
	case "sed":
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
	case "perl", "ruby":
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
	case "python", "python3", "node", "deno", "bun", "php":
		return nil, inlineWrites(args)
	case "mv", "cp", "install", "ln", "rsync", "scp":
		flags, ops := operands(args, map[string]bool{"-t": true, "--target-directory": true, "-S": true,
			"--suffix": true, "-m": true, "--mode": true, "-o": true, "-g": true})
		var target token
		sources := ops
		for _, f := range flags {
			if f.name == "-t" || f.name == "--target-directory" {
				target = token{kind: tWord, text: f.value}
			}
		}
		if target.text == "" {
			if len(ops) < 2 {
				return ops, false
			}
			target, sources = ops[len(ops)-1], ops[:len(ops)-1]
		}
		out := []token{target}
		if name == "mv" {
			out = append(out, sources...)
		}
		for _, src := range sources {
			if !src.dynamic && !target.dynamic {
				out = append(out, token{kind: tWord, text: path.Join(target.text, path.Base(src.text))})
			}
		}
		return out, false
	case "rm", "unlink", "shred":
		_, ops := operands(args, noValues)
		return ops, false
	case "touch":
		_, ops := operands(args, map[string]bool{"-d": true, "-t": true, "-r": true, "--date": true, "--reference": true})
		return ops, false
	case "truncate":
		_, ops := operands(args, map[string]bool{"-s": true, "--size": true, "-r": true, "--reference": true})
		return ops, false
	case "dd":
		var out []token
		for _, a := range args {
			if strings.HasPrefix(a.text, "of=") {
				out = append(out, token{kind: tWord, text: a.text[3:], dynamic: a.dynamic})
			}
		}
		return out, false
	case "git":
		return nil, globalGit[gitSubcommand(args)]
	case "patch", "apply_patch", "applypatch":
		return nil, true
	case "black", "isort", "rustfmt", "autoflake", "pyupgrade":
		return nil, true
	case "gofmt", "goimports", "prettier", "eslint", "ruff", "clang-format", "autopep8", "yapf", "biome", "dprint":
		for _, a := range args {
			switch a.text {
			case "-w", "--write", "--fix", "format", "-i", "--in-place", "--apply", "fmt":
				return nil, true
			}
		}
		return nil, false
	case "go", "cargo", "terraform", "dotnet":
		if len(args) > 0 {
			switch args[0].text {
			case "fmt", "generate", "fix", "format", "mod":
				return nil, true
			}
		}
		return nil, false
	case "npx", "bunx", "pnpx", "uvx", "pipx":
		n, rest := command(args)
		return commandEdits(n, rest, dir)
	case "sh", "bash", "zsh", "dash":
		for i, a := range args {
			if a.text == "-c" && i+1 < len(args) {
				if args[i+1].dynamic {
					return nil, true
				}
				an := Parse(args[i+1].text, dir)
				var out []token
				for _, e := range an.Edits {
					out = append(out, token{kind: tWord, text: e})
				}
				return out, an.Global
			}
		}
		return nil, false
	}
	return nil, false
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
