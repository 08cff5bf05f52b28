# clickaway: build, test, install.
#
#   make install                  release build, then install for your user under ~/.local
#   make uninstall                remove what install put there; your configuration stays
#   make install BUILDDIR=DIR     install the binaries already built in DIR, building nothing
#
# PREFIX=/usr/local installs for everyone (the user unit then goes to
# /usr/local/share/systemd/user, also on the user manager's path). DESTDIR stages the whole
# tree under another root, for packages.
PREFIX ?= $(HOME)/.local
BINDIR ?= $(PREFIX)/bin
DATADIR ?= $(PREFIX)/share
# $XDG_DATA_HOME/systemd/user for PREFIX=~/.local: on the user manager's unit path, systemd.unit(5).
UNITDIR ?= $(DATADIR)/systemd/user
RECIPEDIR ?= $(DATADIR)/clickaway/recipes
DOCDIR ?= $(DATADIR)/doc/clickaway
CONFIGDIR ?= $(or $(XDG_CONFIG_HOME),$(HOME)/.config)/clickaway
# The SwiftPM configuration `install` builds: release or debug.
CONFIGURATION ?= release
# The directory holding built clickaway and clickawayctl; empty: `install` builds them first.
BUILDDIR ?=
SWIFT ?= swift

BINARIES = clickaway clickawayctl
RECIPES = $(wildcard config/recipes/*.toml)
DOCS = README.md config/config.toml
# Where install takes the binaries from (evaluated when used, after the build).
BINARY_SOURCE = $(or $(BUILDDIR),$(shell $(SWIFT) build -c $(CONFIGURATION) $(STATIC) --show-bin-path))
# The Swift runtime linked in: the daemon starts faster and maps 6 MB less of shared
# libraries (BENCHMARKS.md, RSS after start). Empty it to link against the shared runtime.
STATIC ?= --static-swift-stdlib

# The configuration fuzzer: a scratch path of its own, so the normal build never sees it.
FUZZ_SCRATCH ?= .build-fuzz

.PHONY: build test bench bench-x11 fuzz fuzz-build clean binaries install uninstall

build:
	$(SWIFT) build

# The end-to-end tests run the built daemon as a process: `swift test` alone does not link it.
test:
	$(SWIFT) build
	$(SWIFT) test

# Hit-test and decision benchmarks (ordo-one/benchmark), see BENCHMARKS.md.
bench:
	cd Benchmarks && $(SWIFT) package --allow-writing-to-package-directory benchmark --no-progress

# The click path on a private Xvfb, against no daemon (bench/run --help for BENCH_ARGS).
bench-x11:
	bench/run $(BENCH_ARGS)

# libFuzzer over the configuration loader (Fuzz/), until stopped or as FUZZ_ARGS say:
# make fuzz FUZZ_ARGS=-max_total_time=60. A crash or hang leaves its input in .build-fuzz/artifacts/.
fuzz: fuzz-build
	FUZZ_SCRATCH=$(FUZZ_SCRATCH) Fuzz/run $(FUZZ_ARGS)

fuzz-build:
	$(SWIFT) build --package-path Fuzz --scratch-path $(FUZZ_SCRATCH) -c release \
	    -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library

clean:
	rm -rf .build Benchmarks/.build $(FUZZ_SCRATCH)

binaries:
	$(SWIFT) build -c $(CONFIGURATION) $(STATIC)

install: $(if $(BUILDDIR),,binaries)
	@from="$(BINARY_SOURCE)"; \
	for binary in $(BINARIES); do \
	    test -x "$$from/$$binary" || { echo "make install: $$from/$$binary is not built (run swift build -c $(CONFIGURATION), or set BUILDDIR to the directory holding it)" >&2; exit 1; }; \
	done; \
	install -d "$(DESTDIR)$(BINDIR)" && \
	for binary in $(BINARIES); do install -m 0755 "$$from/$$binary" "$(DESTDIR)$(BINDIR)/$$binary" || exit 1; done
	install -d "$(DESTDIR)$(UNITDIR)"
	sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@DOCDIR@|$(DOCDIR)|g' systemd/clickaway.service > "$(DESTDIR)$(UNITDIR)/clickaway.service"
	install -d "$(DESTDIR)$(RECIPEDIR)" "$(DESTDIR)$(DOCDIR)"
	install -m 0644 $(RECIPES) "$(DESTDIR)$(RECIPEDIR)/"
	install -m 0644 $(DOCS) "$(DESTDIR)$(DOCDIR)/"
	@# A configuration is never overwritten: the example goes in only where there is none.
	@if [ -e "$(DESTDIR)$(CONFIGDIR)/config.toml" ] || [ -L "$(DESTDIR)$(CONFIGDIR)/config.toml" ]; then \
	    echo "kept your $(CONFIGDIR)/config.toml as it is (the example is $(DOCDIR)/config.toml)"; \
	else \
	    install -d "$(DESTDIR)$(CONFIGDIR)" && install -m 0644 config/config.toml "$(DESTDIR)$(CONFIGDIR)/config.toml" && \
	    echo "installed the commented example configuration as $(CONFIGDIR)/config.toml"; \
	fi
	@echo "next: systemctl --user daemon-reload; how to start it is at the top of $(UNITDIR)/clickaway.service"

uninstall:
	rm -f $(foreach binary,$(BINARIES),"$(DESTDIR)$(BINDIR)/$(binary)") "$(DESTDIR)$(UNITDIR)/clickaway.service"
	rm -f $(foreach recipe,$(notdir $(RECIPES)),"$(DESTDIR)$(RECIPEDIR)/$(recipe)")
	rm -f $(foreach doc,$(notdir $(DOCS)),"$(DESTDIR)$(DOCDIR)/$(doc)")
	@rmdir "$(DESTDIR)$(RECIPEDIR)" "$(DESTDIR)$(DATADIR)/clickaway" "$(DESTDIR)$(DOCDIR)" 2>/dev/null || true
	@echo "left your configuration in $(CONFIGDIR) as it is"
	@echo "if you had enabled the service: rm $(or $(XDG_CONFIG_HOME),$(HOME)/.config)/systemd/user/graphical-session.target.wants/clickaway.service; then systemctl --user daemon-reload"
