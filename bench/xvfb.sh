# bench/xvfb.sh, sourced by the benches: start_xvfb starts their private X server, and
# build_clickbench builds the X client that measures on it.
# shellcheck shell=bash

# start_xvfb NAME WORK [SCREEN]: starts Xvfb on a display it picks itself (-displayfd), its
# log in WORK/xvfb.log, sets xvfb_pid and exports DISPLAY; exits the bench NAME, saying so with
# the server's log, when the server does not report its display within 10 s.
start_xvfb() {
    local name=$1 work=$2 screen=${3:-1280x1024x24} fd number
    mkfifo "$work/displayfd"
    Xvfb -displayfd 3 -screen 0 "$screen" -nolisten tcp -noreset 3>"$work/displayfd" 2>"$work/xvfb.log" &
    xvfb_pid=$!
    exec {fd}<"$work/displayfd"
    read -r -t 10 -u "$fd" number ||
        { echo "$name: Xvfb did not report its display within 10 s; its log: $(cat "$work/xvfb.log")" >&2; exit 1; }
    exec {fd}<&-
    export DISPLAY=:$number
}

# build_clickbench OUT: bench/clickbench.c compiled to OUT (needs cc, pkg-config and the xcb,
# xcb-xtest and xcb-xfixes development headers).
build_clickbench() {
    # shellcheck disable=SC2046 # pkg-config's flags are meant to split
    cc -O2 -Wall -Wextra -std=c11 -o "$1" "$(dirname "${BASH_SOURCE[0]}")/clickbench.c" $(pkg-config --cflags --libs xcb xcb-xtest xcb-xfixes)
}
