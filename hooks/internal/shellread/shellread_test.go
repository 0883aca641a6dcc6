package shellread

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func whole(p string) Read           { return Read{Path: p, View: Whole()} }
func lines(p string, a, b int) Read { return Read{Path: p, View: View{Ranges: []Range{{a, b}}}} }
func tail(p string, n int) Read     { return Read{Path: p, View: View{Tail: n}} }
func rs(p string, r ...Range) Read  { return Read{Path: p, View: View{Ranges: r}} }
func edits(p ...string) []string    { return p }
func reads(r ...Read) []Read        { return r }

func TestReads(t *testing.T) {
	cases := []struct {
		cmd   string
		reads []Read
		only  bool // OnlyReads
	}{
		// Whole-file reads.
		{"cat main.go", reads(whole("/w/main.go")), true},
		{"cat -n src/app.py", reads(whole("/w/src/app.py")), true},
		{"cat /etc/hosts", reads(whole("/etc/hosts")), true},
		{"cat a.go b.go", reads(whole("/w/a.go"), whole("/w/b.go")), true},
		{"nl -ba lib/x.rs", reads(whole("/w/lib/x.rs")), true},
		{"nl -b a lib/x.rs", reads(whole("/w/lib/x.rs")), true},
		{"less README.md", reads(whole("/w/README.md")), true},
		{"more Makefile", reads(whole("/w/Makefile")), true},
		{"bat --paging=never -l go x.go", reads(whole("/w/x.go")), true},
		{"tac log.txt", reads(whole("/w/log.txt")), true},
		{`cat "with space.md"`, reads(whole("/w/with space.md")), true},
		{`cat 'q.py'`, reads(whole("/w/q.py")), true},
		{`cat ./x/../y.go`, reads(whole("/w/y.go")), true},
		{"cat < in.txt", reads(whole("/w/in.txt")), true},
		{"sudo cat /root/x.conf", reads(whole("/root/x.conf")), true},
		{"LC_ALL=C cat a.txt", reads(whole("/w/a.txt")), true},

		// Ranges.
		{"head -n 50 a.py", reads(lines("/w/a.py", 1, 50)), true},
		{"head -50 a.py", reads(lines("/w/a.py", 1, 50)), true},
		{"head -n50 a.py", reads(lines("/w/a.py", 1, 50)), true},
		{"head --lines=5 a.py", reads(lines("/w/a.py", 1, 5)), true},
		{"head a.py", reads(lines("/w/a.py", 1, 10)), true},
		{"tail -n 30 a.py", reads(tail("/w/a.py", 30)), true},
		{"tail -30 a.py", reads(tail("/w/a.py", 30)), true},
		{"tail -n +100 a.py", reads(lines("/w/a.py", 100, 0)), true},
		{"sed -n '10,20p' a.go", reads(lines("/w/a.go", 10, 20)), true},
		{"sed -n 10,20p a.go", reads(lines("/w/a.go", 10, 20)), true},
		{"sed -n '5p' a.go", reads(lines("/w/a.go", 5, 5)), true},
		{"sed -n '100,$p' a.go", reads(lines("/w/a.go", 100, 0)), true},
		{"sed -n '1,20p;40,50p' a.go", reads(rs("/w/a.go", Range{1, 20}, Range{40, 50})), true},
		{"sed -n '1,80p;80q' a.go", reads(lines("/w/a.go", 1, 80)), true},
		{"sed -n -e '3,4p' a.go", reads(lines("/w/a.go", 3, 4)), true},
		{"sed 30q a.go", reads(lines("/w/a.go", 1, 30)), true},
		{"sed -n '$p' a.go", reads(tail("/w/a.go", 1)), true},
		{"awk 'NR>=10 && NR<=20' a.go", reads(lines("/w/a.go", 10, 20)), true},
		{"awk 'NR==7' a.go", reads(lines("/w/a.go", 7, 7)), true},
		{"awk 'NR>5&&NR<9 {print}' a.go", reads(lines("/w/a.go", 6, 8)), true},
		{`awk 'NR>=3 && NR<=4 {print NR": "$0}' a.go`, reads(lines("/w/a.go", 3, 4)), true},
		{"awk 'NR==3,NR==9' a.go", reads(lines("/w/a.go", 3, 9)), true},
		{"awk 'NR>=40' a.go", reads(lines("/w/a.go", 40, 0)), true},
		{"bat -r 5:25 a.go", reads(lines("/w/a.go", 5, 25)), true},
		{"bat --line-range=30: a.go", reads(lines("/w/a.go", 30, 0)), true},

		// A later stage narrows the read.
		{"cat -n a.go | sed -n '10,20p'", reads(lines("/w/a.go", 10, 20)), true},
		{"cat a.go | head -40", reads(lines("/w/a.go", 1, 40)), true},
		{"cat a.go | tail -5", reads(tail("/w/a.go", 5)), true},
		{"nl -ba a.go | sed -n '200,260p'", reads(lines("/w/a.go", 200, 260)), true},
		{"head -100 a.go | tail -20", reads(lines("/w/a.go", 81, 100)), true},
		{"sed -n '100,200p' a.go | head -10", reads(lines("/w/a.go", 100, 109)), true},
		{"tail -n +50 a.go | head -n 10", reads(lines("/w/a.go", 50, 59)), true},
		{"cat a.go | cat -n | less", reads(whole("/w/a.go")), true},
		{"cat a.go 2>/dev/null", reads(whole("/w/a.go")), true},
		{"cat a.go 2>&1 | head -3", reads(lines("/w/a.go", 1, 3)), true},

		// Compound commands.
		{"cat a.go; cat b.go", reads(whole("/w/a.go"), whole("/w/b.go")), true},
		{"cat a.go && cat b.go", reads(whole("/w/a.go"), whole("/w/b.go")), true},
		{"cat a.go\ncat b.go", reads(whole("/w/a.go"), whole("/w/b.go")), true},
		{"cd sub && cat x.go", reads(whole("/w/sub/x.go")), true},
		{"cd /abs && head -3 y.go", reads(lines("/abs/y.go", 1, 3)), true},
		{"echo '--- a'; cat a.go; echo '--- b'; cat b.go", reads(whole("/w/a.go"), whole("/w/b.go")), true},
		{"cat a.go; pytest -q", reads(whole("/w/a.go")), false},
		{"cat a.go || true", reads(whole("/w/a.go")), true},
		{"cat a.go && echo ok", reads(whole("/w/a.go")), true},
		{"(cat a.go)", reads(whole("/w/a.go")), true},
		{"{ cat a.go; cat b.go; }", reads(whole("/w/a.go"), whole("/w/b.go")), true},
		{"timeout 5 cat a.go", reads(whole("/w/a.go")), true},
		{"cat -- -dash.go", reads(whole("/w/-dash.go")), true},
		{"head -n 20 a.go b.go", reads(lines("/w/a.go", 1, 20), lines("/w/b.go", 1, 20)), true},
		{"cat a.go | head -5 | tail -2", reads(lines("/w/a.go", 4, 5)), true},
		{"sed -n '5,10p' a.go | nl", reads(lines("/w/a.go", 5, 10)), true},
		{"nl -v 0 a.go", reads(whole("/w/a.go")), true},
		{"bat -n a.go", reads(whole("/w/a.go")), true},
		{"cp a.py /tmp/scratch.py && cat /tmp/scratch.py", reads(whole("/tmp/scratch.py")), false},

		// Never a read (parsec's users hit several of these).
		{"pytest tests/ -x 2>&1 | tail -40", nil, false},
		{"python -m pytest -q | tail -40", nil, false},
		{"go test ./... | head -50", nil, false},
		{"npm test 2>&1 | tail -n 30", nil, false},
		{"cargo test | tail", nil, false},
		{"cat a.go | grep func", nil, false},
		{"cat a.py | rg import", nil, false},
		{"cat data.json | jq .name", nil, false},
		{"cat a.go | wc -l", nil, false},
		{"cat script.py | python", nil, false},
		{"cat run.sh | bash", nil, false},
		{"cat a.go | sort | uniq", nil, false},
		{"grep -n foo a.go", nil, false},
		{"rg foo src/", nil, false},
		{"curl -s https://example.com/x.txt | sed -n '1,20p'", nil, false},
		{"curl -s http://localhost/a.py | head -20", nil, false},
		{"cat a.go > b.go", nil, false},
		{"cat a.go >> b.go", nil, false},
		{"cat a.go > /dev/null", nil, false},
		{"cat a.go | tee b.go", nil, false},
		{"cat <<EOF > notes.md\nhello\nEOF", nil, false},
		{"cat <<'EOF' | python\nprint(1)\nEOF", nil, false},
		{"python - <<'EOF'\nopen('a.go').read()\nEOF", nil, false},
		{"cat <<< 'x'", nil, false},
		{"cat", nil, false},
		{"cat -", nil, false},
		{"cat *.go", nil, false},
		{"cat $FILE", nil, false},
		{`cat "$f"`, nil, false},
		{"cat ~/x.go", nil, false},
		{"cat a.go > /dev/stdout", nil, false},
		{"awk 'NR>=1 && NR<=5 {print $1}' a.go", nil, false},
		{"git diff | head -40", nil, false},
		{"cat a.go | tee /dev/stderr", nil, false},
		{`cat "$(git ls-files | head -1)"`, nil, false},
		{"cat /dev/stdin", nil, false},
		{"cat /proc/cpuinfo", nil, false},
		{"tail -f server.log", nil, false},
		{"head -c 100 a.bin", nil, false},
		{"head -n -5 a.go", nil, false},
		{"sed 's/a/b/' a.go", nil, false},
		{"sed -n '/func/p' a.go", nil, false},
		{"sed -i 's/a/b/' a.go", nil, false},
		{"awk '{print $1}' a.go", nil, false},
		{"awk '/TODO/' a.go", nil, false},
		{"awk 'NR>1 {print $2}' a.csv", nil, false},
		{"cat a.go b.go | head -20", nil, false},
		{"cd $X && cat a.go", nil, false},
		{"xargs cat < list.txt", nil, false},
		{"git show HEAD:a.go", nil, false},
		{"ls -la && wc -l a.go", nil, false},
		{"echo hi", nil, false},
		{"", nil, false},
		{"# cat a.go", nil, false},

		// Parsed by a real shell parser: quoting, compound commands,
		// substitutions.
		{`cat a\ b.go`, reads(whole("/w/a b.go")), true},
		{`cat 'a b'.go "c"d.go`, reads(whole("/w/a b.go"), whole("/w/cd.go")), true},
		{`cat "x\$y.go"`, reads(whole("/w/x$y.go")), true},
		{"cat a.go | head -5 # first lines", reads(lines("/w/a.go", 1, 5)), true},
		{"time cat a.go", reads(whole("/w/a.go")), true},
		{"(cd sub && cat x.go); cat y.go", reads(whole("/w/sub/x.go"), whole("/w/y.go")), true},
		{"cat a.go &", reads(whole("/w/a.go")), true},
		{"if true; then cat a.go; fi", nil, false},
		{"for f in a.go b.go; do cat $f; done", nil, false},
		{"while read l; do cat a.go; done < list", nil, false},
		{"cat a.go | while read l; do echo $l; done", nil, false},
		{`echo "$(cat a.go)"`, nil, false},
		{"cat <(sort a.go)", nil, false},
		{"{ cat a.go; } > out.txt", nil, false},
		{"{ cat a.go; } | grep x", nil, false},
		{"cat {a,b}.go", nil, false},
		{"cat a.go |", nil, false},
		{"cat a.go; if x; then y; fi", reads(whole("/w/a.go")), false},
		{"cat <<EOF\n$(cat a.go)\nEOF", nil, false},
	}
	assert.GreaterOrEqual(t, len(cases), 60)
	for _, c := range cases {
		t.Run(c.cmd, func(t *testing.T) {
			a := Parse(c.cmd, "/w")
			assert.Equal(t, c.reads, a.Reads)
			assert.Equal(t, c.only, a.OnlyReads, "OnlyReads")
		})
	}
}

func TestEdits(t *testing.T) {
	cases := []struct {
		cmd    string
		edits  []string
		global bool
	}{
		{"echo x > a.go", edits("/w/a.go"), false},
		{"printf 'x' >> log/a.txt", edits("/w/log/a.txt"), false},
		{"go test ./... > out.txt 2> err.txt", edits("/w/out.txt", "/w/err.txt"), false},
		{"cmd &> all.log", edits("/w/all.log"), false},
		{"make 2>&1 >/dev/null", nil, false},
		{"echo x | tee a.go b.go", edits("/w/a.go", "/w/b.go"), false},
		{"echo x | tee -a a.go", edits("/w/a.go"), false},
		{"sed -i 's/a/b/' a.go", edits("/w/a.go"), false},
		{"sed -i.bak -e 's/a/b/' a.go b.go", edits("/w/a.go", "/w/b.go"), false},
		{"sed --in-place 's/x/y/g' c.go", edits("/w/c.go"), false},
		{"perl -pi -e 's/a/b/' a.pl", edits("/w/a.pl"), false},
		{"mv a.go b.go", edits("/w/b.go", "/w/a.go", "/w/b.go/a.go"), false},
		{"cp a.go dir", edits("/w/dir", "/w/dir/a.go"), false},
		{"rm -f a.go b.go", edits("/w/a.go", "/w/b.go"), false},
		{"cp -t dst a.go b.go", edits("/w/dst", "/w/dst/a.go", "/w/dst/b.go"), false},
		{"mv -t dst a.go", edits("/w/dst", "/w/a.go", "/w/dst/a.go"), false},
		{"touch -d yesterday a.go", edits("/w/a.go"), false},
		{"touch new.go", edits("/w/new.go"), false},
		{"truncate -s 0 a.log", edits("/w/a.log"), false},
		{"dd if=/dev/zero of=blob.bin bs=1 count=1", edits("/w/blob.bin"), false},
		{"cd sub && echo x > a.go", edits("/w/sub/a.go"), false},
		{"cat <<EOF > notes.md\nbody > not-a-target\nEOF", edits("/w/notes.md"), false},
		{"git checkout -- a.go", nil, true},
		{"git -C repo apply fix.patch", nil, true},
		{"git stash pop", nil, true},
		{"git reset --hard HEAD", nil, true},
		{"git restore a.go", nil, true},
		{"git status", nil, false},
		{"git diff a.go", nil, false},
		{"patch -p1 < fix.diff", nil, true},
		{"gofmt -w .", nil, true},
		{"gofmt -l .", nil, false},
		{"npx prettier --write src", nil, true},
		{"ruff format .", nil, true},
		{"go generate ./...", nil, true},
		{"echo x > $OUT", nil, true},
		{`python -c "open('a.txt','w').write('x')"`, nil, true},
		{`python -c "print(1)"`, nil, false},
		{`bash -c "sed -i s/a/b/ a.go"`, edits("/w/a.go"), false},
		{"cat a.go", nil, false},
		{"pytest -q | tail -40", nil, false},

		// Compound commands, substitutions, xargs and find (issue 11).
		{"if true; then rm x.txt; fi", edits("/w/x.txt"), false},
		{"if [ -f a ]; then :; elif true; then rm b.go; else echo x > c.go; fi", edits("/w/b.go", "/w/c.go"), false},
		{"for f in a.go b.go; do sed -i 's/a/b/' $f; done", edits("/w/a.go", "/w/b.go"), false},
		{`for f in a.go sub/b.go; do sed -i "s/a/b/" "$f"; done`, edits("/w/a.go", "/w/sub/b.go"), false},
		{"for f in a.go; do rm ${f}.bak; done", edits("/w/a.go.bak"), false},
		{"for f in *.go; do sed -i 's/a/b/' $f; done", nil, true},
		{"for f in a.go; do f=other.go; rm $f; done", nil, true},
		{"for f in a.go b.go; do gofmt -l $f; done > log.txt", edits("/w/log.txt"), false},
		{"while read f; do rm \"$f\"; done < list.txt", nil, true},
		{"case $x in a) rm a.go;; *) touch b.go;; esac", edits("/w/a.go", "/w/b.go"), false},
		{"f() { rm a.go; }", edits("/w/a.go"), false},
		{"{ echo x; } > out.txt", edits("/w/out.txt"), false},
		{"(cd sub && rm a.go); rm b.go", edits("/w/sub/a.go", "/w/b.go"), false},
		{"cd sub; for f in a.go; do rm $f; done", edits("/w/sub/a.go"), false},
		{"if cd sub; then :; fi; rm a.go", nil, true},
		{"time rm a.go", edits("/w/a.go"), false},
		{"! rm a.go", edits("/w/a.go"), false},
		{"echo x > a.go &", edits("/w/a.go"), false},
		{`echo "$(rm a.go)"`, edits("/w/a.go"), false},
		{"X=$(mktemp); rm $X", nil, true},
		{"diff <(sort a) <(sort b) > out.txt", edits("/w/out.txt"), false},
		{"cat <<EOF > notes.md\n$(rm a.go)\nEOF", edits("/w/a.go", "/w/notes.md"), false},
		{"cat <<'EOF' > notes.md\n$(rm a.go)\nEOF", edits("/w/notes.md"), false},
		{"rm {a,b}.go", nil, true},
		{"xargs rm < list.txt", nil, true},
		{"git ls-files | xargs sed -i 's/x/y/'", nil, true},
		{"xargs -0 -n 1 rm -f", nil, true},
		{"ls | xargs -I{} mv {} done/", edits("/w/done"), true},
		{"xargs cat < list.txt", nil, false},
		{"xargs", nil, false},
		{"find . -name '*.orig' -delete", nil, true},
		{"find . -name '*.go' -exec sed -i 's/a/b/' {} +", nil, true},
		{`find . -name '*.go' -exec rm '{}' \;`, nil, true},
		{`find . -name '*.go' -exec cat {} \;`, nil, false},
		{"find . -type f -fprint list.txt", edits("/w/list.txt"), false},
		{"find . -name x -execdir sh -c 'echo y > out.txt' \\;", edits("/w/out.txt"), false},
		{"cat a.go |", nil, true},
	}
	for _, c := range cases {
		t.Run(c.cmd, func(t *testing.T) {
			a := Parse(c.cmd, "/w")
			assert.Equal(t, c.edits, a.Edits)
			assert.Equal(t, c.global, a.Global, "Global")
			if len(c.edits) > 0 || c.global {
				assert.False(t, a.OnlyReads)
			}
		})
	}
}

func TestRelativeWithoutDir(t *testing.T) {
	assert.Equal(t, reads(whole("a.go")), Parse("cat ./a.go", "").Reads)
	assert.Nil(t, Parse("cd - && cat a.go", "/w").Reads)
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"cat a.go | head -5", "sed -n '1,2p;3q' x", "awk 'NR==1,NR==2' y",
		"cat <<EOF\nx\nEOF\ncat b", `echo "$(cat a)" > b`, "bash -c 'mv a b'", "tail -n +3 a | tail -2",
		"head -100 a | sed -n 5,10p | tail -2", "cd x; cd ..; cat ../../a", "'", `"\`, "$((", "cat ${",
		"for f in a b; do sed -i s/x/y/ $f; done", "if true; then rm x; fi", "find . -exec rm {} +",
		"xargs -I{} cp {} d < l", "f() { (cd x; cat y) | head -2; }", "cat <<-E\n\t$(rm a)\nE"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		a := Parse(cmd, "/w")
		for _, r := range a.Reads {
			if r.Path == "" {
				t.Fatalf("empty path in %+v", a)
			}
			if r.View.Tail < 0 || (r.View.Tail == 0 && len(r.View.Ranges) == 0) {
				t.Fatalf("empty view in %+v", r)
			}
			for _, g := range r.View.Ranges {
				if g.Start < 1 || g.End != 0 && g.End < g.Start {
					t.Fatalf("bad range %+v for %q", g, cmd)
				}
			}
		}
		if a.OnlyReads && (len(a.Reads) == 0 || len(a.Edits) > 0 || a.Global) {
			t.Fatalf("inconsistent %+v", a)
		}
	})
}

// BenchmarkParse times the analysis of command lines the hook sees often.
func BenchmarkParse(b *testing.B) {
	cmds := []string{
		"cat -n pkg/a/file.go | sed -n '1,80p'",
		"pytest tests/test_api.py -x 2>&1 | tail -40",
		"cd sub && git status --short && go test ./... 2>&1 | head -50",
		"for f in a.go b.go; do sed -i 's/a/b/' $f; done",
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		Parse(cmds[i%len(cmds)], "/w")
	}
}
