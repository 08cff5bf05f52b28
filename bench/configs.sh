# bench/configs.sh, sourced by bench/run and bench/sizelimit: configurations they share.
# shellcheck shell=bash

# write_big500 FILE: the 500-popup configuration, each popup a window match, an anchor and a
# region with slop (the shape of BENCHMARKS.md's `clickawayctl check` file).
write_big500() {
    local i
    for ((i = 0; i < 500; i++)); do
        printf '[[popup]]\nname = "p%d"\nwindow = { class = "C%d" }\nanchors = [ { rect = [%d, 0, 10, 10] } ]\n  [[popup.region]]\n  name = "card"\n  rect = [1, 1, 50, 50]\n  slop = 2\n\n' "$i" "$i" "$i"
    done >"$1"
}
