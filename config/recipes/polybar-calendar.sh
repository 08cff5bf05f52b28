#!/bin/sh
# clickaway recipe: polybar's popup calendar with no config.toml entry (compare polybar.toml).
#
# In the bar's configuration, instead of popup-calendar.sh --popup:
#
#     [module/date]
#     type = internal/date
#     date = %a %d %b
#     label = %{A1:~/.local/share/clickaway/recipes/polybar-calendar.sh:}%date%%{A}
#
# polybar's internal/date module has no click-left (only custom modules have one): the action
# tag %{A1:command:} around the label runs the command on a left click, through sh -c. A colon
# inside the command must be written \\: in the configuration file.
#
# A first click on the date opens a yad calendar below it; a click outside the calendar closes
# it (and goes nowhere else); a second click on the date closes it too: the date is the
# popup's anchor, so that click goes on to polybar, which runs this script again, and the
# script closes the calendar it finds open. Set CALENDAR_X, CALENDAR_Y (where the calendar
# goes) and CALENDAR_ANCHOR (the date module's rectangle X,Y,W,H, measured with
# `xdotool getmouselocation`) to fit your bar: in polybar's environment, or in the command:
# %{A1:CALENDAR_X=1000 CALENDAR_Y=24 ~/.local/share/clickaway/recipes/polybar-calendar.sh:}
set -u
x=${CALENDAR_X:-1690}
y=${CALENDAR_Y:-24}
anchor=${CALENDAR_ANCHOR:-1700,0,140,22}

# Open already: removing the popup ends the `wait` of the script that opened it, which then
# ends its calendar.
if clickawayctl close polybar-calendar >/dev/null 2>&1; then
    exit 0
fi

yad --calendar --undecorated --fixed --no-buttons --skip-taskbar --width=222 --height=193 \
    --posx="$x" --posy="$y" --title=yad-calendar >/dev/null &
calendar=$!
clickawayctl wait --pid "$calendar" --timeout 10 --name polybar-calendar --anchor "$anchor" --dismiss kill >/dev/null
# 0: a click outside killed it already; 3: closed by a second click; otherwise an error.
kill "$calendar" 2>/dev/null
exit 0
