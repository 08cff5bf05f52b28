import ClickawayCommandLine
import ClickawayCore
import ClickawayDaemon

@main
struct Clickaway: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clickaway",
        abstract: "Close popups when you click outside them.",
        discussion: """
            Watches pointer input on the X server, a Wayland compositor with layer-shell or GNOME \
            Shell (through clickaway's GNOME Shell extension, docs/gnome.md), \
            hit-tests each click against the popups described in \
            ~/.config/clickaway/config.toml, dismisses the popups a click lands outside of and \
            lets clicks inside them pass. The configuration is reloaded when \
            its files change, on SIGHUP and on `clickawayctl reload`; SIGTERM and SIGINT release \
            every grab and exit. Under systemd (Type=notify) it reports readiness and pings \
            the watchdog itself.
            It reads $XDG_CONFIG_HOME/clickaway/config.toml (default ~/.config/clickaway/config.toml), \
            then conf.d/*.toml beside it, described in clickaway.toml(5), and answers clickawayctl(1) on \
            $XDG_RUNTIME_DIR/clickaway/ctl.sock.
            Start-up: under systemd, `systemctl --user enable --now clickaway` starts it with \
            graphical-session.target. A session that has no such target (i3, openbox, bspwm and \
            other plain window managers) starts it from its own start-up: `exec clickaway` in \
            i3's config, `clickaway &` in ~/.xinitrc or openbox's autostart, or, to keep the \
            unit's restarts and journal, `systemctl --user import-environment DISPLAY XAUTHORITY` \
            then `systemctl --user start clickaway`. The unit skips the start when neither \
            DISPLAY nor WAYLAND_DISPLAY is in the user manager's environment, and does not \
            restart after exit status 64, 69 or 73, which a restart cannot fix.
            Log: on stderr, one line per event with the time, the level (error, warning, info, \
            debug or trace, as --log-level names them) and the message; a configuration's \
            diagnostic takes several lines. When stderr is the journal ($JOURNAL_STREAM names it, \
            as systemd sets it for a unit) each event is one journal entry with its priority \
            (error 3, warning 4, info 6, debug and trace 7) and no time of its own: it goes to the \
            journal's socket, /run/systemd/journal/socket, where a diagnostic keeps its lines \
            (`journalctl --user -u clickaway` shows them, `journalctl --user -u clickaway -p err` \
            only the errors) and each key=value of an event is a field of its own, its key upper-cased \
            after CLICKAWAY_ (`journalctl --user CLICKAWAY_POPUP=calendar`); when that socket is not there it is one `<N>`-prefixed line on \
            stderr, with each line break of a diagnostic shown as a return sign (U+23CE). \
            The daemon never waits for its log: an event a terminal held with ^S, a pipe nobody \
            reads or a full journal stream cannot take at once is dropped, and the next line \
            says how many were (a warning). Popups opening and closing are logged at most 50 \
            times a second; the next such line says how many were not (`unlogged`), so that \
            a burst of windows does not reach the journal's rate limit.
            """,
        version: clickawayVersionText(program: "clickaway"),
        exitStatuses: DaemonExitStatus.allCases.map { ExitStatusHelp($0.rawValue, $0.meaning) },
        manual: clickawayManual)

    @Option(name: [.customShort("c"), .long], help: ArgumentHelp("Read this file instead of config.toml and conf.d/*.toml.", valueName: "file"),
            completion: .file(extension: "toml"))
    var config: String?

    @Option(name: .long, help: """
        How clicks reach the daemon (overrides [settings] backend). auto is wayland when \
        WAYLAND_DISPLAY is set and --display is not given, else x11-grab, which switches to \
        x11-shield when another client's grab refuses one of its own.
        """)
    var backend: Backend?

    @Option(name: .long, help: ArgumentHelp("How much to log (overrides [settings] log_level).", valueName: "level"))
    var logLevel: LogLevel?

    @Option(name: .long, help: "The X display to use instead of $DISPLAY.")
    var display: String?

    func run() throws {
        let status = DaemonLauncher.run(DaemonLauncher.Options(configFile: config, backend: backend, logLevel: logLevel, display: display))
        if status != 0 { throw ExitCode(status) }
    }
}

extension Backend: ExpressibleByArgument {}
extension LogLevel: ExpressibleByArgument {}
