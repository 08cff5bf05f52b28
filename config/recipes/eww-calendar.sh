#!/bin/sh
# clickaway recipe: an eww calendar with no config.toml entry (compare eww.toml).
#
# Not tested with the real program: Debian 12 does not ship eww.
#
# The bar's button runs this script instead of `eww open --toggle calendar`:
#
#     (button :onclick "~/.local/share/clickaway/recipes/eww-calendar.sh" "calendar")
#
# with a calendar window as in eww.toml:
#
#     (defwindow calendar
#       :monitor 0
#       :geometry (geometry :x "-10px" :y "40px" :width "320px" :height "304px" :anchor "top right")
#       (box :class "card" (calendar)))
#
# The script opens the window and registers its rectangle as a popup, with the bar button as
# its anchor, and eww's own `eww close calendar` as what a click outside runs. A second click
# on the button is on the anchor: it goes on to eww, which runs this script again, and the
# script closes the calendar. A rectangle works on X11 and on every Wayland compositor with
# layer-shell, where eww's windows are layer surfaces that no other client can see.
#
# CALENDAR_RECT is the window's rectangle on screen (X,Y,W,H: on a 1920-pixel-wide output,
# "-10px" from the right edge is x = 1920 - 10 - 320), CALENDAR_ANCHOR the button's.
set -u
rect=${CALENDAR_RECT:-1590,40,320,304}
anchor=${CALENDAR_ANCHOR:-1700,0,120,32}

if clickawayctl close eww-calendar >/dev/null 2>&1; then
    eww close calendar
    exit 0
fi
eww open calendar || exit 1
clickawayctl open --rect "$rect" --name eww-calendar --anchor "$anchor" -- eww close calendar >/dev/null
