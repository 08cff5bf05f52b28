# clickaway: build, test, install, package.
#
#   make build-deps               install what `make install` needs (Debian, Ubuntu; asks sudo)
#   make deps                     install what the build, the tests and `make deb` need
#   make install                  release build, then install under ~/.local (/usr/local as root)
#   make uninstall                remove what install put there; your configuration stays
#   make install BUILDDIR=DIR     install the binaries already built in DIR, building nothing
#   make test                     the whole suite (debug and release builds first), then 30 s of fuzzing
#   make deb                      a Debian package in .build/packages/
#   make dist                     a tarball of the release binaries with an install script
#
# PREFIX=/usr/local installs for everyone. BINDIR, DATADIR, MANDIR, UNITDIR, BASHCOMPDIR,
# ZSHCOMPDIR, FISHCOMPDIR, RECIPEDIR, DOCDIR and CONFIGDIR set single directories, and DESTDIR
# stages the whole tree under another root: packaging/install.sh, which does the installing
# (the tarball ships it as install.sh), says what each one is.
SWIFT ?= swift
STRIP ?= strip
# The Swift runtime linked in: the binaries run on a machine without Swift, and the daemon
# maps less than with the shared runtime. So is the C++ library that runtime needs: loading
# libstdc++.so costs 0.7 MiB of resident symbol tables, linking its few parts in 0.1 MiB.
# The toolchain links it as -lstdc++, and a directory holding only libstdc++.a, searched
# first, makes that the archive. No dynamic symbol table for the programs' own functions:
# nothing looks them up. (BENCHMARKS.md, Footprint.)
STATIC_CXX = .build/static-libstdc++
# Linked by lld, which swift.org's toolchains carry since Swift 6.0, for its packed relative
# relocations (DT_RELR): the programs' 28,000 of them take 5.5 KB where gold, the toolchain's
# default, writes 683 KB that the loader reads at every start. glibc reads them from 2.36 on, so
# they are packed only where the build's glibc is that new: built on an older one, the programs
# run there. The toolset hands the driver -use-ld=lld, which -Xswiftc does not pass to the link.
GLIBC := $(shell getconf GNU_LIBC_VERSION 2>/dev/null)
PACK_RELOCATIONS := $(if $(shell printf '%s\n' 'glibc 2.36' '$(GLIBC)' | sort -V -C && echo yes),-Xlinker -z -Xlinker pack-relative-relocs)
RELEASE_LINK = --toolset $(CURDIR)/packaging/release-toolset.json $(PACK_RELOCATIONS)
STATIC ?= --static-swift-stdlib -Xlinker -L$(CURDIR)/$(STATIC_CXX) -Xlinker --no-export-dynamic $(RELEASE_LINK)
# The directory holding built clickaway and clickawayctl; empty: build them first (release).
BUILDDIR ?=
# Where `make deb` and `make dist` put what they make.
PACKAGEDIR ?= .build/packages
# The installable tree: bin/ and share/ as packaging/install.sh lays them out.
STAGE ?= .build/stage

VERSION := $(shell sed -n 's/^public let clickawayVersion = "\(.*\)"$$/\1/p' Sources/ClickawayCore/Version.swift)
# The date on the generated man page: the last commit's, so rebuilding changes nothing.
MANDATE ?= $(shell git log -1 --format=%cs 2>/dev/null || date +%F)
# The hand-written clickaway.toml(5) is dated by the last commit that changed it, as the
# generated pages are by MANDATE; outside a git checkout it keeps the date it carries.
TOML5DATE ?= $(shell git log -1 --format=%cd --date='format:%B %-d, %Y' -- man/clickaway.toml.5 2>/dev/null)
# apt-get needs root; as another user, make asks sudo.
SUDO ?= $(if $(filter 0,$(shell id -u)),,sudo)
RELEASE_BIN = $(shell $(SWIFT) build -c release $(STATIC) --show-bin-path)
# gcc's static C++ library, which the Swift toolchain's prerequisites include, as a C compiler
# finds it: $(CC), else the toolchain's clang beside $(SWIFT), else gcc (a fresh machine with
# only the toolchain and its prerequisites may have no cc). packaging/find-libstdcxx says which
# is missing when it cannot.
FIND_LIBSTDCXX = CC='$(CC)' SWIFT='$(SWIFT)' packaging/find-libstdcxx
# Where the staged binaries come from (evaluated when used, after the build).
BINARY_SOURCE = $(or $(BUILDDIR),$(RELEASE_BIN))
# The variables install.sh takes, passed on when set on the command line or in the environment.
INSTALL_VARIABLES = PREFIX DESTDIR BINDIR DATADIR MANDIR UNITDIR BASHCOMPDIR ZSHCOMPDIR FISHCOMPDIR RECIPEDIR DOCDIR CONFIGDIR GNOMEEXTDIR GNOME_SHELL_VERSION
INSTALL_ARGUMENTS = $(foreach v,$(INSTALL_VARIABLES),$(if $(filter command line environment,$(origin $(v))),'$(v)=$($(v))'))
# The configuration fuzzer: a scratch path of its own, so the normal build never sees it.
FUZZ_SCRATCH ?= .build-fuzz

.PHONY: build test bench bench-x11 fuzz fuzz-build clean deps build-deps check-build-deps check-test-deps check-lld binaries \
	print-bindir stage install uninstall deb dist

build: check-build-deps
	$(SWIFT) build

# The end-to-end tests run the built programs as processes, and the packaging tests the
# release ones: `swift test` alone links none of them.
test: check-test-deps check-lld $(STATIC_CXX)/libstdc++.a
	$(SWIFT) build
	$(SWIFT) build -c release $(STATIC)
	CLICKAWAY_RELEASE_BIN="$(RELEASE_BIN)" $(SWIFT) test
	$(MAKE) fuzz FUZZ_ARGS=-max_total_time=30

deps:
	$(SUDO) apt-get update
	$(SUDO) apt-get install -y --no-install-recommends $$(packaging/check-deps --list build test package)

build-deps:
	$(SUDO) apt-get update
	$(SUDO) apt-get install -y --no-install-recommends $$(packaging/check-deps --list build)

check-build-deps:
	@packaging/check-deps --for "make $(or $(MAKECMDGOALS),build)" build

check-test-deps:
	@packaging/check-deps --for "make test" build test package

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

binaries: check-build-deps check-lld $(STATIC_CXX)/libstdc++.a
	$(SWIFT) build -c release $(STATIC)

# The toolchain's clang looks for ld.lld beside itself, then on PATH.
check-lld:
	@swift=$$(command -v $(SWIFT)) && { [ -x "$$(dirname "$$(readlink -f "$$swift")")/ld.lld" ] || command -v ld.lld >/dev/null; } || \
	    { echo "make: no ld.lld beside $(SWIFT) nor on PATH; the release build links with lld, which swift.org's toolchains carry since Swift 6.0" >&2; exit 1; }

$(STATIC_CXX)/libstdc++.a:
	@library=$$($(FIND_LIBSTDCXX)) && mkdir -p $(STATIC_CXX) && echo "ln -sf $$library $@" && ln -sf "$$library" $@

print-bindir:
	@echo "$(BINARY_SOURCE)"

# Everything install.sh installs, from the binaries in BINARY_SOURCE: stripped programs, the
# man pages and completion scripts each program writes from its own command definitions
# (bash's have no #! line: they are sourced), the unit, recipes and docs (the README, the
# licence, the example configuration, and docs/ beside them, where the README's links lead).
stage: $(if $(BUILDDIR),,binaries)
	@from="$(BINARY_SOURCE)"; for binary in clickaway clickawayctl; do \
	    test -x "$$from/$$binary" || { echo "make: $$from/$$binary is not built (run make binaries, or set BUILDDIR to the directory holding it)" >&2; exit 1; }; \
	done
	rm -rf $(STAGE)
	mkdir -p $(STAGE)/bin $(STAGE)/share/man/man1 $(STAGE)/share/man/man5 \
	    $(STAGE)/share/bash-completion/completions $(STAGE)/share/zsh/site-functions \
	    $(STAGE)/share/fish/vendor_completions.d $(STAGE)/share/systemd/user \
	    $(STAGE)/share/clickaway/recipes $(STAGE)/share/doc/clickaway/docs
	set -e; for binary in clickaway clickawayctl; do \
	    $(STRIP) --remove-section=.comment --remove-section=.note -o $(STAGE)/bin/$$binary "$(BINARY_SOURCE)/$$binary"; \
	    $(STAGE)/bin/$$binary --generate-completion-script bash >$(STAGE)/share/bash-completion/completions/$$binary; \
	    $(STAGE)/bin/$$binary --generate-completion-script zsh >$(STAGE)/share/zsh/site-functions/_$$binary; \
	    $(STAGE)/bin/$$binary --generate-completion-script fish >$(STAGE)/share/fish/vendor_completions.d/$$binary.fish; \
	    $(STAGE)/bin/$$binary --generate-manual --date $(MANDATE) >$(STAGE)/share/man/man1/$$binary.1; \
	done
	sed '$(if $(TOML5DATE),s/^\.Dd .*/.Dd $(TOML5DATE)/)' man/clickaway.toml.5 >$(STAGE)/share/man/man5/clickaway.toml.5
	cp systemd/clickaway.service $(STAGE)/share/systemd/user/
	cp config/recipes/*.toml config/recipes/*.sh $(STAGE)/share/clickaway/recipes/
	cp README.md LICENSE config/config.toml $(STAGE)/share/doc/clickaway/
	cp docs/*.md docs/*.png docs/example.toml docs/example.svg $(STAGE)/share/doc/clickaway/docs/
	data/gnome-shell/build $(STAGE)/gnome-shell

install: stage
	packaging/install.sh --from $(STAGE) $(INSTALL_ARGUMENTS)

uninstall:
	packaging/install.sh --uninstall $(INSTALL_ARGUMENTS)

# A .deb of the staged tree, laid out as Debian wants it; Depends from dpkg-shlibdeps.
deb: stage
	packaging/build-deb $(STAGE) $(VERSION) $(PACKAGEDIR)

# clickaway-VERSION-linux-ARCH.tar.gz: the staged tree and install.sh, for other distributions.
dist: stage
	packaging/build-dist $(STAGE) $(VERSION) $(PACKAGEDIR)
