#!/bin/sh
# Installs clickaway from a tree laid out as bin/ and share/ (the release tarball this script
# sits in, or the tree `make install` stages), or removes what it installed.
#
#   ./install.sh [VAR=value ...]               install
#   ./install.sh --uninstall [VAR=value ...]   remove what an install with the same PREFIX put there
#
# PREFIX defaults to ~/.local (for your user), or /usr/local when run as root. The other
# directories follow from it and can each be set: BINDIR, DATADIR, MANDIR, UNITDIR (the
# systemd user unit), BASHCOMPDIR, ZSHCOMPDIR, FISHCOMPDIR, RECIPEDIR, DOCDIR, GNOMEEXTDIR
# (GNOME Shell's extensions; GNOME_SHELL_VERSION=N picks the extension for that version). DESTDIR
# stages everything under another root, for packages. The commented example configuration
# goes to CONFIGDIR/config.toml (default: ~/.config/clickaway for an install under your home,
# none otherwise), and only if there is no configuration there yet.
set -eu

usage() { sed -n '2,15s/^# \{0,1\}//p' "$0"; }

from=$(cd "$(dirname "$0")" && pwd)
action=install
while [ $# -gt 0 ]; do
    case $1 in
        --uninstall) action=uninstall ;;
        --from) [ $# -ge 2 ] || { echo "install.sh: --from needs a directory" >&2; exit 2; }; from=$2; shift ;;
        -h|--help) usage; exit 0 ;;
        PREFIX=*|DESTDIR=*|BINDIR=*|DATADIR=*|MANDIR=*|UNITDIR=*|BASHCOMPDIR=*|ZSHCOMPDIR=*|FISHCOMPDIR=*|RECIPEDIR=*|DOCDIR=*|CONFIGDIR=*|GNOMEEXTDIR=*|GNOME_SHELL_VERSION=*)
            name=${1%%=*}
            eval "$name=\${1#*=}" ;;
        *) echo "install.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done

home=${HOME:-}
if [ -z "${PREFIX:-}" ]; then
    if [ "$(id -u)" = 0 ]; then PREFIX=/usr/local; else PREFIX=$home/.local; fi
fi
DESTDIR=${DESTDIR:-}
BINDIR=${BINDIR:-$PREFIX/bin}
DATADIR=${DATADIR:-$PREFIX/share}
MANDIR=${MANDIR:-$DATADIR/man}
# $XDG_DATA_HOME/systemd/user for PREFIX=~/.local: on the user manager's unit path, systemd.unit(5).
UNITDIR=${UNITDIR:-$DATADIR/systemd/user}
BASHCOMPDIR=${BASHCOMPDIR:-$DATADIR/bash-completion/completions}
ZSHCOMPDIR=${ZSHCOMPDIR:-$DATADIR/zsh/site-functions}
FISHCOMPDIR=${FISHCOMPDIR:-$DATADIR/fish/vendor_completions.d}
RECIPEDIR=${RECIPEDIR:-$DATADIR/clickaway/recipes}
DOCDIR=${DOCDIR:-$DATADIR/doc/clickaway}
# Where GNOME Shell looks for extensions: ~/.local/share/gnome-shell/extensions for a user's
# install, $DATADIR/gnome-shell/extensions (on XDG_DATA_DIRS) for everyone's.
GNOMEEXTDIR=${GNOMEEXTDIR:-$DATADIR/gnome-shell/extensions}
if [ -z "${CONFIGDIR+set}" ]; then
    case $PREFIX/ in
        "$home"/?*) CONFIGDIR=${XDG_CONFIG_HOME:-$home/.config}/clickaway ;;
        *) CONFIGDIR= ;;
    esac
fi
# What was installed, for --uninstall (not written into a package's staging tree).
MANIFEST=$DATADIR/clickaway/installed-files

# destination SOURCE-DIRECTORY: where the files of one directory of the tree go.
destination() {
    case $1 in
        bin) echo "$BINDIR" ;;
        share/man/man*) echo "$MANDIR/${1#share/man/}" ;;
        share/bash-completion/completions) echo "$BASHCOMPDIR" ;;
        share/zsh/site-functions) echo "$ZSHCOMPDIR" ;;
        share/fish/vendor_completions.d) echo "$FISHCOMPDIR" ;;
        share/systemd/user) echo "$UNITDIR" ;;
        share/clickaway/recipes) echo "$RECIPEDIR" ;;
        share/doc/clickaway) echo "$DOCDIR" ;;
        share/doc/clickaway/docs) echo "$DOCDIR/docs" ;;
        *) echo "install.sh: $from/$1 is not part of the layout" >&2; exit 1 ;;
    esac
}

if [ "$action" = uninstall ]; then
    if [ ! -f "$DESTDIR$MANIFEST" ]; then
        echo "install.sh: nothing to remove: $DESTDIR$MANIFEST (written by an install with PREFIX=$PREFIX) does not exist" >&2
        exit 1
    fi
    while IFS= read -r file; do rm -f "$DESTDIR$file"; done <"$DESTDIR$MANIFEST"
    rm -f "$DESTDIR$MANIFEST"
    # Only clickaway's own directories: the shared ones (bin, man1, ...) may be someone's PATH.
    rmdir "$DESTDIR$RECIPEDIR" "$DESTDIR$DOCDIR/docs" "$DESTDIR$DOCDIR" "$DESTDIR$DATADIR/clickaway" \
        "$DESTDIR$GNOMEEXTDIR/clickaway@clickaway.github.io" 2>/dev/null || true
    echo "removed clickaway from $PREFIX; your configuration stays where it is"
    echo "if you had enabled the service: systemctl --user disable clickaway; systemctl --user daemon-reload"
    exit 0
fi

[ -x "$from/bin/clickaway" ] && [ -x "$from/bin/clickawayctl" ] ||
    { echo "install.sh: $from/bin has no clickaway and clickawayctl to install" >&2; exit 1; }
installed=$(mktemp)
trap 'rm -f "$installed"' EXIT
(cd "$from" && find bin share -type f | LC_ALL=C sort) | while IFS= read -r file; do
    directory=$(destination "$(dirname "$file")")
    target=$directory/$(basename "$file")
    mkdir -p "$DESTDIR$directory"
    case $file in
        bin/*) install -m 0755 "$from/$file" "$DESTDIR$target" ;;
        # Recipes that are scripts are run from where they are installed.
        share/clickaway/recipes/*.sh) install -m 0755 "$from/$file" "$DESTDIR$target" ;;
        # The unit names the paths the programs and docs were installed to.
        share/systemd/user/*.service)
            sed -e "s|@BINDIR@|$BINDIR|g" -e "s|@DOCDIR@|$DOCDIR|g" "$from/$file" >"$DESTDIR$target"
            chmod 0644 "$DESTDIR$target" ;;
        *) install -m 0644 "$from/$file" "$DESTDIR$target" ;;
    esac
    echo "$target" >>"$installed"
done
# The GNOME Shell extension: one entry file for GNOME Shell 43 and 44 (imports), another
# for 45 and later (ES modules), as `gnome-shell --version` says (GNOME_SHELL_VERSION=45
# chooses without asking); without GNOME Shell, the newer one.
if [ -d "$from/gnome-shell" ]; then
    shell=${GNOME_SHELL_VERSION:-$(gnome-shell --version 2>/dev/null | sed -n 's/^GNOME Shell \([0-9]*\).*/\1/p')}
    case $shell in 43|44) style=imports ;; *) style=module ;; esac
    uuid=clickaway@clickaway.github.io
    mkdir -p "$DESTDIR$GNOMEEXTDIR/$uuid"
    for file in extension.js metadata.json; do
        install -m 0644 "$from/gnome-shell/$style/$uuid/$file" "$DESTDIR$GNOMEEXTDIR/$uuid/$file"
        echo "$GNOMEEXTDIR/$uuid/$file" >>"$installed"
    done
    echo "installed the GNOME Shell extension for GNOME Shell ${shell:-45 and later} into $DESTDIR$GNOMEEXTDIR/$uuid"
    if [ -n "$shell" ] && [ -z "$DESTDIR" ]; then
        echo "on GNOME: log out and in (GNOME Shell on Wayland finds a new extension only when it starts), then: gnome-extensions enable $uuid"
    fi
fi
if [ -z "$DESTDIR" ]; then
    mkdir -p "$(dirname "$MANIFEST")"
    cp "$installed" "$MANIFEST"
fi
echo "installed clickaway into $DESTDIR$PREFIX"

# A configuration is never overwritten: the example goes in only where there is none.
if [ -n "$CONFIGDIR" ]; then
    if [ -e "$DESTDIR$CONFIGDIR/config.toml" ] || [ -L "$DESTDIR$CONFIGDIR/config.toml" ]; then
        echo "kept your $CONFIGDIR/config.toml as it is (the example is $DOCDIR/config.toml)"
    else
        mkdir -p "$DESTDIR$CONFIGDIR"
        install -m 0644 "$from/share/doc/clickaway/config.toml" "$DESTDIR$CONFIGDIR/config.toml"
        echo "installed the commented example configuration as $CONFIGDIR/config.toml"
    fi
fi
[ -n "$DESTDIR" ] || echo "next: systemctl --user daemon-reload; systemctl --user enable --now clickaway (see clickaway(1))"
