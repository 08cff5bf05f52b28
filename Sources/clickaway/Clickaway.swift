import ClickawayCommandLine
import ClickawayCore
import ClickawayDaemon

@main
struct Clickaway: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clickaway",
        abstract: "Close popups when you click outside them.",
        discussion: """
            Watches pointer input on the X server or a Wayland compositor with layer-shell, \
            hit-tests each click against the popups described in \
            ~/.config/clickaway/config.toml, dismisses the popups a click lands outside of and \
            lets clicks inside them pass. The configuration is reloaded when \
            its files change, on SIGHUP and on `clickawayctl reload`; SIGTERM and SIGINT release \
            every grab and exit. Under systemd (Type=notify) it reports readiness and pings \
            the watchdog itself.
            Files: $XDG_CONFIG_HOME/clickaway/config.toml (default ~/.config/clickaway/config.toml), \
            then conf.d/*.toml beside it, described in clickaway.toml(5); the control socket \
            $XDG_RUNTIME_DIR/clickaway/ctl.sock, for clickawayctl(1).
            Exit status: 0 after SIGTERM or SIGINT; 1 when it cannot start (no display, no control \
            socket) or loses the display, so that systemd restarts it; \
            64 for a wrong command line.
            """,
        version: clickawayVersionText(program: "clickaway"))

    @Option(name: .long, help: ArgumentHelp("Read this file instead of config.toml and conf.d/*.toml.", valueName: "file"),
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
