#!/bin/sh
# Regenerates the client code in ../include and .. from the protocol descriptions here.
# xdg-shell.xml and xdg-output-unstable-v1.xml are copies from Debian 12's wayland-protocols
# 1.31; wlr-layer-shell-unstable-v1.xml (version 4) and wlr-virtual-pointer-unstable-v1.xml
# (version 2) from the wlr-protocols repository, which Debian does not package.
# The output is committed, so building needs no wayland-scanner.
set -eu
cd "$(dirname "$0")"
for xml in *.xml; do
    name=${xml%.xml}
    wayland-scanner client-header "$xml" "../include/$name-client-protocol.h"
    wayland-scanner private-code "$xml" "../$name-protocol.c"
done
