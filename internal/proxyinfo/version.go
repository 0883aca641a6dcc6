package proxyinfo

import (
	"regexp"
	"strconv"
	"sync"

	"golang.org/x/mod/semver"
)

// describe matches a release version as the binaries carry it: a semver
// tag, optionally followed by git describe's -N-gHASH and -dirty.
// It is compiled on first use: the no-reread hook links this package and
// pays every package's init on each call, but never compares versions.
var describe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(v?\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+?)?)(?:-(\d+)-g[0-9a-f]+)?(?:-dirty)?$`)
})

// release splits v into its semver tag ("v" added) and the commits after
// it; ok is false for what is not a release version ("dev", a bare commit).
func release(v string) (tag string, after int, ok bool) {
	m := describe().FindStringSubmatch(v)
	if m == nil {
		return "", 0, false
	}
	tag = m[1]
	if tag[0] != 'v' {
		tag = "v" + tag
	}
	if !semver.IsValid(tag) {
		return "", 0, false
	}
	if m[2] != "" {
		after, _ = strconv.Atoi(m[2])
	}
	return tag, after, true
}

// Older reports whether a proxy of version running is older than ours,
// so a SessionStart or an install of ours should replace it. Both must be
// release versions: a semver tag (v0.2.0), or git describe's form of a
// later commit (v0.2.0-3-gabc1234), ordered by tag and then by commits
// after it. A development build ("dev", a bare commit) compares with
// nothing: it is never replaced and never replaces, and neither is a
// proxy of the same or a newer version (a session of an older plugin
// version, still open, does not undo an update).
func Older(running, ours string) bool {
	rt, rn, ok1 := release(running)
	ot, on, ok2 := release(ours)
	if !ok1 || !ok2 {
		return false
	}
	if c := semver.Compare(rt, ot); c != 0 {
		return c < 0
	}
	return rn < on
}
