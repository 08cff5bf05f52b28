#!/bin/sh
# clickaway recipe: a popup from a plain shell script, with no config.toml entry.
#
# Shows a yad calendar at X,Y (default: where the pointer is) and waits: double-click a date
# and the script prints it; click anywhere outside the calendar and it goes away, the click
# going nowhere else. Works under any X11 window manager.
#
#     popup-calendar.sh [X Y]
#
# On sway, yad's placing (X Y, or the pointer) does nothing: sway tiles the calendar. A rule in
# ~/.config/sway/config floats it and centres it on the pointer (X Y are then ignored):
#
#     for_window [app_id="yad" title="^clickaway-calendar$"] floating enable, border none, move position cursor
#
# `clickawayctl wait` registers the calendar's window by its process id, then blocks until the
# window goes: exit 0 when a click outside dismissed it (`--dismiss kill` has ended yad by
# then), 3 when it went by itself (yad exits after a double-click on a date).
set -u

out=$(mktemp) || exit 2
trap 'rm -f "$out"' EXIT

if [ $# -ge 2 ]; then
    where="--posx=$1 --posy=$2"
else
    where=--mouse
fi
# shellcheck disable=SC2086 # $where is two options or one
yad --calendar --undecorated --no-buttons --skip-taskbar $where --title=clickaway-calendar >"$out" &
calendar=$!

clickawayctl wait --pid "$calendar" --timeout 10 --dismiss kill >/dev/null
case $? in
    0)  echo "dismissed"
        exit 1 ;;
    3)  wait "$calendar"
        cat "$out" ;;
    *)  kill "$calendar" 2>/dev/null
        exit 2 ;;
esac
