import ClickawayCommandLine
import ClickawayControl

/// clickawayctl(1)'s exit statuses: every code the commands end with.
let clickawayctlExitStatuses = [
    ExitStatusHelp(0, "Done: the configuration is valid, the request was carried out, the popup `wait` waited for was dismissed, `pick` picked a window."),
    ExitStatusHelp(1, """
        An invalid configuration, a rejected reload, or a request the daemon refused (an unknown popup, a window popup \
        given to `open`, a runtime popup it cannot register: a name taken, no such window or process, no window of \
        --pid in time); `pick`: nothing picked (cancelled, timed out, the desktop clicked, the pointer grabbed by another program).
        """),
    ExitStatusHelp(2, """
        A file that cannot be read, the daemon cannot be reached or went away (the message says how to start it), \
        or an answer it cannot understand; `pick`: the X server (on sway and KDE Plasma, the daemon) cannot be reached.
        """),
    ExitStatusHelp(3, "`wait` only: the popup went away without being dismissed (closed, its window or parent gone, a reload)."),
    ExitStatusHelp(64, """
        A command line clickawayctl cannot take (an unknown command or option, a malformed rectangle, two places \
        for one popup), before anything is sent.
        """),
    ExitStatusHelp(130, "`wait` only: interrupted by SIGINT; the popup is removed first, without its dismiss action."),
    ExitStatusHelp(143, "`wait` only: ended by SIGTERM; the popup is removed first, without its dismiss action."),
]

/// clickawayctl(1)'s sections beyond help: the JSON it prints, environment, files, signals, examples.
let clickawayctlManual: [ManualSection] = [
    ManualSection("JSON OUTPUT", [
        .text("""
            With --json each command prints one object on one line; `monitor` prints one object per line. \
            Keys may be added; none is removed or changes meaning within a version.
            """),
        .list(.command, [
            ManualItem("check --json", """
                "ok": true with "popups" and "exclusions" (counts), "files", "notes" and "warnings" (arrays of strings); \
                or "ok": false with "error" (the text check prints) and "diagnostics", each with "file", "line", "column" \
                and "path" where known, and "message".
                """),
            ManualItem("reload --json", """
                The daemon's reply: "ok": true with "popups" and "files"; or "ok": false with "error" and "diagnostics".
                """),
            ManualItem("hit --json", """
                "x", "y"; "hit": null when nothing is hit, else {"popup": P, "region": R}, with "member" (a window id) \
                and "tie" (transient-for, same-client or same-process) when the point is on a window of the popup's \
                family; "path", the popups and regions from the popup to \
                the region; "dismiss", the popups dismissed, sorted; "click": "pass", "swallow" or "replay"; "grab": \
                null, or, against the live daemon on X11, the program that holds the pointer now, so the click goes to \
                it and clickaway decides nothing.
                """),
            ManualItem("status --json", """
                "ok": true; "backend" ("x11-grab", "x11-shield", "wayland" or "gnome") and "display", with the backend's \
                own state (on X11 "fallback", "grab" with "active", "buttons", "held" and "refused", "shield" \
                once the shield mode was entered, "escape"; on Wayland the overlay's outputs and holes, and "sway" (its IPC), "kwin" (the script, KWin's major version, windows with a role) or "gnome" (on GNOME, where the overlay is the \
                extension's layer: "extension", "connected", "shell", "windows" with a role, "waiting", what the daemon waits for while not connected)); "config", the files read; \
                "popups", how many are configured; "running": "files", "last-good" (then "last_good" has "file" and \
                "saved") or "none"; "rejected", a rejected configuration's errors or null; "unavailable", sources the \
                display cannot provide; "open", the open popups (of a popup with many windows open, its first \(StatusReport.instanceLimit)), each as the opened event has it, \
                with a family's first \(OpenPopup.statusMemberLimit) windows in "members" and "ties" and how many more in "members_left_out" (only \
                when there are more); "open_left_out", how many more are open (only when there are more); "waiting", runtime \
                popups waiting for their window; "monitors"; "last_error", or null.
                """),
            ManualItem("dismiss --json", """
                The daemon's reply: "ok": true, "popup", and "dismissed", the popups dismissed (NAME and those nested \
                in it; empty when NAME was not open).
                """),
            ManualItem("wait --json", """
                The socket's last line: {"event": "dismissed", "popup": P, "reason": R, "button": B, "x": X, "y": Y, \
                "click": C} or {"event": "gone", "popup": P, "reason": R}.
                """),
            ManualItem("pick --json", """
                "name", a suggested popup name; "window", the client window (sway's container id on sway, the KWin script's number on KWin), and "frame", \
                its frame or null; "app_id" for a Wayland window; "rect", \
                [x, y, width, height]; "class", "instance", "title" (each null when the window has none), "types"; \
                "match", the window table the printed block would use, or null; "override_redirect"; "dismiss".
                """),
        ]),
        .text("An example of hit --json:"),
        .literal(#"{"x":900,"y":600,"hit":{"popup":"P","region":"P.card"},"path":["P","P.card"],"dismiss":["Q"],"click":"pass","grab":null}"#),
        .text("""
            Each monitor line has "event" and the fields below; "window" is hex on X11, sway's container id, the GNOME extension's or the KWin script's number on \
            Wayland and null for a rect popup; "runtime" is true for a popup registered with open --rect, --window, \
            --pid or wait; "members" are the windows of its family and "ties" says, for each, the rule that took it in. An opened event comes once clicks outside the \
            popup are intercepted.
            """),
        .list(.plain, MonitorEvent.documentation.map { entry in
            ManualItem(entry.events.map(\.rawValue).joined(separator: ", "),
                       entry.fields.map { "\"\($0)\"" }.joined(separator: ", ") + (entry.note.map { "; \($0)" } ?? "") + ".")
        }),
    ]),
    ManualSection("ENVIRONMENT", [
        .list(.variable, [
            ManualItem("XDG_RUNTIME_DIR", "Where the daemon's control socket is; commands that talk to the daemon fail (exit 2) without it."),
            ManualItem("XDG_CONFIG_HOME", "Where check, hit and the completions look for the configuration (default ~/.config)."),
            ManualItem("DISPLAY", "The X display pick uses unless --display names one."),
        ]),
    ]),
    ManualSection("FILES", [
        .list(.path, [
            ManualItem("$XDG_RUNTIME_DIR/clickaway/ctl.sock", "The daemon's control socket: one JSON object per line each way."),
            ManualItem("$XDG_CONFIG_HOME/clickaway/config.toml", "The configuration check and hit read, then conf.d/*.toml beside it; see clickaway.toml(5)."),
        ]),
    ]),
    ManualSection("SIGNALS", [
        .list(.signal, [
            ManualItem("SIGINT", "`wait` removes its popup, without its dismiss action, then exits 130."),
            ManualItem("SIGTERM", "`wait` removes its popup the same way, then exits 143."),
        ]),
    ]),
    ManualSection("EXAMPLES", [
        .text("Check a configuration before the daemon sees it, then reload it:"),
        .literal("clickawayctl check -c ~/.config/clickaway/config.toml\nclickawayctl reload"),
        .text("Ask what a press at 900,600 would do now, then offline, against a file, with its rect popup menu open:"),
        .literal("clickawayctl hit 900 600\nclickawayctl hit -c try.toml --open menu 900 600"),
        .text("Describe a window to paste into the configuration:"),
        .literal("clickawayctl pick >> ~/.config/clickaway/conf.d/picked.toml"),
        .text("Close a calendar from a script when a click lands outside it:"),
        .literal("yad --calendar & clickawayctl wait --pid $! --dismiss kill"),
        .text("Follow what the daemon does:"),
        .literal("clickawayctl monitor | jq ."),
    ]),
]
