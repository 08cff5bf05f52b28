#!/bin/sh
# Regenerates the client code in ../include and .. from the protocol descriptions here.
# xdg-shell.xml, xdg-output-unstable-v1.xml and tablet-unstable-v2.xml are copies from
# Debian 12's wayland-protocols 1.31; wlr-layer-shell-unstable-v1.xml (version 4) and
# wlr-virtual-pointer-unstable-v1.xml (version 2) from the wlr-protocols repository, which
# Debian does not package; fake-input.xml (org_kde_kwin_fake_input, version 6) from KDE's
# plasma-wayland-protocols (src/protocols/fake-input.xml), under the LGPL 2.1 or later
# (LGPL-2.1-or-later.txt here). Each file's licence is in its <copyright> block, which
# wayland-scanner copies into the code it generates.
# The output is committed, so building needs no wayland-scanner.
set -eu
cd "$(dirname "$0")"
for xml in *.xml; do
    name=${xml%.xml}
    wayland-scanner client-header "$xml" "../include/$name-client-protocol.h"
    wayland-scanner private-code "$xml" "../$name-protocol.c"
done
