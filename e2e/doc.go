// Package e2e holds synaxi's end-to-end tests and the repository-wide checks
// that no single module can make.
//
// The end-to-end tests drive the built binaries and the plugin as a user runs
// them, mostly with the real Claude Code CLI (pinned in package claudecli)
// against the scripted fake upstream (package fakeapi). The repository-wide
// checks cover every package's doc, the modules' dependency direction and
// docs/development.md's package map.
//
// Invariants: the tests run offline and start every server they need; each
// test gets its own HOME and XDG directories, so none reads or writes the
// user's; a test that needs a tool the machine lacks (tmux, strace) skips and
// says so. See e2e/README.md.
package e2e
