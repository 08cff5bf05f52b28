import ClickawayCommandLine

/// clickaway(1)'s sections beyond help: environment, files, signals, examples.
let clickawayManual: [ManualSection] = [
    ManualSection("ENVIRONMENT", [
        .list(.variable, [
            ManualItem("DISPLAY", "The X server to use, unless --display names one."),
            ManualItem("WAYLAND_DISPLAY", "With --backend auto and no --display, clickaway uses this Wayland compositor (it needs layer-shell, or on GNOME clickaway's GNOME Shell extension: docs/gnome.md)."),
            ManualItem("XDG_CONFIG_HOME", "Where the configuration is (default ~/.config)."),
            ManualItem("XDG_RUNTIME_DIR", "Where the control socket is made; without it clickawayctl(1) cannot reach the daemon."),
            ManualItem("XDG_STATE_HOME", "Where the last good configuration is kept (default ~/.local/state)."),
            ManualItem("NOTIFY_SOCKET", "Set by systemd for Type=notify: readiness, reloads and status lines go there."),
            ManualItem("WATCHDOG_USEC", "Set by systemd with WatchdogSec=: clickaway pings the watchdog at half the interval (with WATCHDOG_PID naming it)."),
            ManualItem("DBUS_SESSION_BUS_ADDRESS", """
                The session bus a rejected configuration is shown on, as a desktop notification (notify-send; \
                [settings] notify in clickaway.toml(5)); without it, $XDG_RUNTIME_DIR/bus.
                """),
        ]),
        .text("""
            Dismiss commands run without a shell, with the daemon's environment and CLICKAWAY_POPUP, CLICKAWAY_WINDOW, \
            CLICKAWAY_BUTTON, CLICKAWAY_X and CLICKAWAY_Y (CLICKAWAY_KEY for Escape) describing the dismissal.
            """),
    ]),
    ManualSection("FILES", [
        .list(.path, [
            ManualItem("$XDG_CONFIG_HOME/clickaway/config.toml", "The configuration, described in clickaway.toml(5); --config replaces the lookup."),
            ManualItem("$XDG_CONFIG_HOME/clickaway/conf.d/*.toml", "Drop-ins, read after config.toml in name order."),
            ManualItem("$XDG_RUNTIME_DIR/clickaway/ctl.sock", "The control socket clickawayctl(1) talks to, mode 0600 in a directory of mode 0700."),
            ManualItem("$XDG_STATE_HOME/clickaway/last-good.toml", """
                The last configuration that loaded without errors: a daemon started with a configuration that has \
                errors runs with it until the files are fixed.
                """),
        ]),
    ]),
    ManualSection("SIGNALS", [
        .list(.signal, [
            ManualItem("SIGHUP", "Reload the configuration now, as clickawayctl reload does; a configuration with errors leaves the running one in place."),
            ManualItem("SIGTERM", "Release every grab, close the control socket and exit 0."),
            ManualItem("SIGINT", "The same as SIGTERM."),
            ManualItem("SIGCHLD", "Collects dismiss commands and notify-send when they end."),
        ]),
        .text("SIGPIPE is ignored: a client that goes away costs only its connection."),
    ]),
    ManualSection("EXAMPLES", [
        .text("Start it with the graphical session, under systemd:"),
        .literal("systemctl --user enable --now clickaway"),
        .text("Start it from i3's config, or from ~/.xinitrc or openbox's autostart:"),
        .literal("exec clickaway\nclickaway &"),
        .text("Try a configuration in the foreground, logging every decision:"),
        .literal("clickaway --config ./try.toml --log-level debug"),
    ]),
]
