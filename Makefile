# synaxi — build, test and release.
#
#   make build     every binary into plugin/bin (version stamped from git)
#   make test      race-enabled unit tests in every module, then the real-client e2e
#   make check     gofmt, go vet, race tests, per-module GOWORK=off build, go mod tidy check
#   make lint      the static part of check: gofmt, vet, staticcheck, deadcode, GOWORK=off build, tidy,
#                  actionlint
#   make bench     benchmarks; raw output and a summary in bench/RESULTS.md
#   make e2e       only the end-to-end tests (real Claude Code CLI against a fake upstream)
#   make install   build, then `synaxi install` (plugin, status line, proxy)
#   make release   release archives this machine can build (docs/release.md) + checksums
#   make clean     remove built binaries and release archives

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := build

VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := $(EXTRA_LDFLAGS) -X main.version=$(VERSION)
BIN := plugin/bin

# Product modules (unit tests, vet, tidy) and the end-to-end module.
MODULES := internal learning hooks mcp proxyd mapgen installer
ALL_MODULES := $(MODULES) e2e

# The binaries the plugin needs, as <module>/cmd/<name>; every one must build.
COMMANDS := proxyd/cmd/synaxi-proxyd hooks/cmd/synaxi-noreread hooks/cmd/synaxi-statusline \
	hooks/cmd/synaxi-session mcp/cmd/synaxi-mcp mapgen/cmd/synaxi-mapgen installer/cmd/synaxi
# Any further command in a product module (e.g. learning/cmd/synaxi-ingest) is built too.
EXTRA_COMMANDS := $(filter-out $(COMMANDS),$(patsubst %/,%,$(dir $(wildcard $(addsuffix /cmd/*/main.go,$(MODULES))))))

# Only the map parsers (tree-sitter) need cgo; every other binary is built
# static, so a hook starts without the dynamic loader (about 1 ms a start).
CGO_MODULES := mapgen mcp

GO_TEST_FLAGS ?=
E2E_TIMEOUT ?= 40m
# proxyd/internal/replay replays every fixture transcript under -race: 598 s on
# an idle 2-core machine, at the edge of go test's default 10m.
UNIT_TIMEOUT ?= 25m

.PHONY: build
build:
	@mkdir -p $(BIN)
	@for c in $(COMMANDS) $(EXTRA_COMMANDS); do \
		mod=$${c%%/*}; name=$${c##*/}; \
		cgo=0; case " $(CGO_MODULES) " in *" $$mod "*) cgo=1 ;; esac; \
		echo "go build $$name ($(VERSION), CGO_ENABLED=$$cgo)"; \
		(cd $$mod && CGO_ENABLED=$$cgo go build -trimpath -ldflags "$(LDFLAGS)" -o $(abspath $(BIN))/$$name ./$${c#*/}) || exit 1; \
	done

.PHONY: test
test: test-unit e2e

.PHONY: test-unit
test-unit:
	@for m in $(MODULES); do \
		echo "== go test -race $$m"; \
		(cd $$m && go test -race -timeout $(UNIT_TIMEOUT) $(GO_TEST_FLAGS) ./...) || exit 1; \
	done

.PHONY: e2e
e2e: build
	@echo "== go test -race e2e (real Claude Code CLI $$(sed -n 's/^const Version = "\(.*\)"/\1/p' e2e/claudecli/claudecli.go))"
	cd e2e && SYNAXI_PLUGIN_BUILT=1 go test -race -timeout $(E2E_TIMEOUT) $(GO_TEST_FLAGS) ./...

.PHONY: lint
lint: fmt-check vet staticcheck deadcode build-gowork-off tidy-check actionlint

.PHONY: check
check: lint test-unit

.PHONY: fmt-check
fmt-check:
	@out=$$(gofmt -l $(ALL_MODULES)); \
	if [ -n "$$out" ]; then echo "gofmt: these files need formatting:"; echo "$$out"; exit 1; fi

.PHONY: vet
vet:
	@for m in $(ALL_MODULES); do \
		echo "== go vet $$m"; \
		if [ -z "$$(cd $$m && go list ./... 2>/dev/null)" ]; then echo "   (no packages yet)"; continue; fi; \
		(cd $$m && go vet ./...) || exit 1; \
	done

# Pinned analysers, fetched through the module proxy like any module.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: staticcheck
staticcheck:
	@for m in $(ALL_MODULES); do \
		echo "== staticcheck $$m"; \
		(cd $$m && go run $(STATICCHECK) ./...) || exit 1; \
	done

# The release workflow: expressions, runner labels, and its run scripts
# through shellcheck when shellcheck is installed. Pinned like staticcheck.
ACTIONLINT := github.com/rhysd/actionlint/cmd/actionlint@v1.7.12

.PHONY: actionlint
actionlint:
	@echo "== actionlint"; go run $(ACTIONLINT) .github/workflows/*.yml

# Functions that no binary reaches (tests are not roots); see scripts/deadcode.sh.
.PHONY: deadcode
deadcode:
	@echo "== deadcode"; scripts/deadcode.sh

.PHONY: build-gowork-off
build-gowork-off:
	@for m in $(ALL_MODULES); do \
		echo "== GOWORK=off go build $$m"; (cd $$m && GOWORK=off go build ./... && GOWORK=off go vet ./...) || exit 1; \
	done

.PHONY: tidy-check
tidy-check:
	@bad=; for m in $(ALL_MODULES); do \
		echo "== go mod tidy -diff $$m"; \
		(cd $$m && GOWORK=off go mod tidy -diff) || bad="$$bad $$m"; \
	done; \
	if [ -n "$$bad" ]; then echo "not tidy:$$bad; run GOWORK=off go mod tidy in each" >&2; exit 1; fi

.PHONY: bench
bench:
	scripts/bench.sh

.PHONY: install
install: build
	@claude=$$(command -v claude || scripts/claude-cli.sh); \
	echo "using $$claude ($$($$claude --version 2>/dev/null))"; \
	SYNAXI_CLAUDE="$$claude" PATH="$$(dirname "$$claude"):$$PATH" $(BIN)/synaxi install

# Release archives for every platform this machine can build with cgo (the
# host's; the others are skipped and the summary says why), then their
# checksums into plugin/checksums.txt. The release workflow runs the same
# script on a native runner per platform; see docs/release.md. The archives are
# named after the plugin version (RELEASE_VERSION, default plugin.json's); the
# binaries carry the git version (VERSION on the command line, else the script's
# own `git describe`, which ignores the checksums it writes).
.PHONY: release
release:
	$(if $(filter command line,$(origin VERSION)),GIT_VERSION=$(VERSION)) scripts/release.sh

# The commands scripts/release.sh builds, "<module>/cmd/<name> <cgo 0|1>" a line.
.PHONY: print-commands
print-commands:
	@for c in $(COMMANDS) $(EXTRA_COMMANDS); do \
		cgo=0; case " $(CGO_MODULES) " in *" $${c%%/*} "*) cgo=1 ;; esac; \
		echo "$$c $$cgo"; \
	done

.PHONY: clean
clean:
	rm -f $(BIN)/synaxi $(BIN)/synaxi-proxyd $(BIN)/synaxi-noreread $(BIN)/synaxi-statusline \
		$(BIN)/synaxi-session $(BIN)/synaxi-mcp $(BIN)/synaxi-mapgen $(addprefix $(BIN)/,$(notdir $(EXTRA_COMMANDS)))
	rm -rf dist bench/*.tmp
