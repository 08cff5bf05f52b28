#!/bin/sh
# clickaway recipe: waybar's clock opens a calendar on sway, with no config.toml entry.
#
# waybar's clock module runs this script on a click, and sway floats the calendar and puts it
# under the clock: the lines for waybar's and sway's configuration are in sway.toml (part 2).
#
# A first click on the clock opens a yad calendar; a click on the calendar leaves it; a click
# outside it closes it (and goes nowhere else); a second click on the clock closes it too: the
# clock is the popup's anchor, so that click goes on to waybar, which runs this script again,
# and the script closes the calendar it finds open. There is one calendar at most.
#
# CALENDAR_ANCHOR is the clock's rectangle X,Y,W,H on sway's layout (`swaymsg -t get_outputs`
# shows where each output is); the default is the right 200 pixels of a 30 pixel high bar at
# the top of a 1920 pixel wide output. Set it in the clock's on-click, as sway.toml shows.
set -u
anchor=${CALENDAR_ANCHOR:-1720,0,200,30}

# Open already: removing the popup ends the `wait` of the script that opened it, which then
# ends its calendar.
if clickawayctl close waybar-calendar >/dev/null 2>&1; then
    exit 0
fi

# No --posx/--posy: sway ignores them; its for_window rule places the window by its title.
yad --calendar --undecorated --fixed --no-buttons --skip-taskbar --title=waybar-calendar >/dev/null &
calendar=$!
clickawayctl wait --pid "$calendar" --name waybar-calendar --anchor "$anchor" --dismiss kill >/dev/null
# 0: a click outside killed it already; 3: closed by a second click; otherwise an error (the
# name taken by a calendar opened meanwhile, no daemon): no second calendar stays.
kill "$calendar" 2>/dev/null
exit 0
