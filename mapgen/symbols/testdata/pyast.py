"""Print, per Python file under a directory, the definitions the ast module
finds in the shape synaxi's Python parser reports them: module-level
functions, classes and assignments; class-level functions, classes and
assignments; functions and classes nested in functions. One JSON object per
line: {"file": relative path, "defs": [[kind, name, start, end, parent], ...]}.
Files ast cannot parse are left out, and so are the standard library's own
test suites (directories test, tests, idle_test) and site-packages: they are
not the library, and ten times its size."""
import ast
import json
import os
import sys
import warnings


SKIP_DIRS = {"test", "tests", "idle_test", "site-packages", "__pycache__"}


def names(target):
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [e.id for e in target.elts if isinstance(e, ast.Name)]
    return []


def block(body, parent, in_func, out):
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            start = min([d.lineno for d in node.decorator_list] + [node.lineno])
            kind = "class" if isinstance(node, ast.ClassDef) else "func"
            out.append([kind, node.name, start, node.end_lineno, parent])
            if kind == "class":
                block(node.body, node.name, False, out)
            else:
                block(node.body, node.name, True, out)
        elif not in_func and isinstance(node, ast.Assign):
            for n in names(node.targets[0]):
                out.append(["var", n, node.lineno, node.end_lineno, parent])
        elif not in_func and isinstance(node, ast.AnnAssign):
            for n in names(node.target):
                out.append(["var", n, node.lineno, node.end_lineno, parent])


def main(root):
    warnings.simplefilter("ignore")
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for fn in sorted(filenames):
            if not fn.endswith(".py"):
                continue
            path = os.path.join(dirpath, fn)
            try:
                with open(path, "rb") as f:
                    tree = ast.parse(f.read(), path)
            except (SyntaxError, ValueError, UnicodeDecodeError):
                continue
            out = []
            block(tree.body, "", False, out)
            print(json.dumps({"file": os.path.relpath(path, root), "defs": out}))


if __name__ == "__main__":
    main(sys.argv[1])
