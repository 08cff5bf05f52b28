# clickaway: build, test, install.
PREFIX ?= $(HOME)/.local
BINDIR ?= $(PREFIX)/bin
CONFIGDIR ?= $(or $(XDG_CONFIG_HOME),$(HOME)/.config)/clickaway
SWIFT ?= swift

.PHONY: build test bench clean

build:
	$(SWIFT) build

# The end-to-end tests run the built daemon as a process: `swift test` alone does not link it.
test:
	$(SWIFT) build
	$(SWIFT) test

# Hit-test and decision benchmarks (ordo-one/benchmark), see BENCHMARKS.md.
bench:
	cd Benchmarks && $(SWIFT) package --allow-writing-to-package-directory benchmark --no-progress

clean:
	rm -rf .build Benchmarks/.build
