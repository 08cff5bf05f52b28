import ArgumentParser
import ClickawayConfig
import ClickawayControl
import ClickawayCore
import ClickawaySystem
import ClickawayWayland
import ClickawayX11
import Glibc
import Logging

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
        version: "clickaway \(clickawayVersion)")

    @Option(name: .long, help: ArgumentHelp("Read this file instead of config.toml and conf.d/*.toml.", valueName: "file"),
            completion: .file(extensions: ["toml"]))
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
        let environment = processEnvironment()
        var logger = Logger(label: "clickaway") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .info

        let (loaded, startError) = loadAtStart(environment: environment, logger: logger)
        logger.logLevel = Logger.Level(logLevel ?? loaded.config.model.settings.logLevel)
        for note in loaded.config.notes { logger.notice("\(note)") }

        let requested = backend
        let chosen = requested ?? loaded.config.model.settings.backend
        let waylandDisplay = environment["WAYLAND_DISPLAY"].flatMap { $0.isEmpty ? nil : $0 }
        let daemon: Daemon
        if chosen == .wayland || (chosen == .auto && waylandDisplay != nil && display == nil) {
            daemon = startOnWayland(waylandDisplay, loaded.config, backend: requested, environment: environment, logger: logger)
        } else {
            daemon = startOnX(loaded.config, backend: requested, environment: environment, logger: logger)
        }
        if let startError { daemon.startedWithErrors(startError, running: loaded.running) }
        let status = daemon.run()
        if status != 0 { throw ExitCode(status) }
    }

    /// The configuration to start with. Nothing in the files stops the daemon: with errors it
    /// runs with the last configuration that loaded (or none), says so, and the watcher
    /// applies the files once they are fixed. A configuration that loads is kept as the last good one.
    private func loadAtStart(environment: [String: String], logger: Logger)
        -> (config: (config: LoadedConfig, running: RunningConfig), error: String?) {
        let lastGood = LastGoodConfig(state: StateLocation(environment: environment), configFile: config, environment: environment)
        do {
            let loaded = try ConfigLoader.load(file: config, environment: environment)
            if let failure = lastGood.save(loaded) { logger.warning("cannot keep this configuration as the last good one: \(failure)") }
            return ((loaded, .files), nil)
        } catch {
            let fix = "fix the errors and save: the file is watched and applied once it loads (`clickawayctl check` shows the errors)"
            switch lastGood.load() {
            case .success(let kept):
                logger.error("\(error)\nthe configuration has errors; running with the last configuration that loaded, saved \(kept.saved) in \(lastGood.path), until then: \(fix)")
                return ((kept.config, .lastGood(saved: kept.saved)), "\(error)")
            case .failure(let why):
                logger.error("\(error)\nthe configuration has errors; running with no popups, as there is no last good configuration to fall back on (\(why)): \(fix)")
                return ((try! ConfigLoader.load([]), .none), "\(error)")
            }
        }
    }

    /// The display first, then the control socket: a daemon that cannot reach its display
    /// leaves nothing behind.
    private func controlServer(_ environment: [String: String], loop: PollLoop) -> ControlServer {
        Signals.install()
        do {
            return try ControlServer(directory: try ControlPath.directory(environment: environment), loop: loop)
        } catch {
            fail("\(error)")
        }
    }

    private func startOnX(_ loaded: LoadedConfig, backend: Backend?, environment: [String: String], logger: Logger) -> Daemon {
        let x: XConnection
        do {
            x = try XConnection(display: display)
        } catch {
            fail("\(error)")
        }
        let loop = PollLoop()
        let control = controlServer(environment, loop: loop)
        do {
            return try X11Daemon(x: x, config: loaded, configFile: config, backend: backend, loop: loop, control: control,
                                 notifier: SystemdNotifier(environment: environment), logger: logger)
        } catch {
            fail("cannot set up on the X server \(x.display): \(error)")
        }
    }

    /// The compositor must offer layer-shell; sway's IPC is used when $SWAYSOCK is set.
    private func startOnWayland(_ waylandDisplay: String?, _ loaded: LoadedConfig, backend: Backend?,
                                environment: [String: String], logger: Logger) -> Daemon {
        guard let name = waylandDisplay else {
            fail("backend \"wayland\" needs WAYLAND_DISPLAY, which is not set: start clickaway inside the Wayland session "
                 + "(systemd: `systemctl --user import-environment WAYLAND_DISPLAY`)")
        }
        let client: WaylandClient
        do {
            client = try WaylandClient(display: name)
        } catch {
            fail("\(error)")
        }
        let loop = PollLoop()
        let control = controlServer(environment, loop: loop)
        do {
            return try WaylandDaemon(client: client, config: loaded, configFile: config, backend: backend, loop: loop, control: control,
                                     notifier: SystemdNotifier(environment: environment),
                                     swaySocket: environment["SWAYSOCK"].flatMap { $0.isEmpty ? nil : $0 }, logger: logger)
        } catch WaylandError.missingGlobal(let interface, let purpose) where interface == "zwlr_layer_shell_v1" {
            fail("the compositor on \(client.connection.display) does not offer \(interface), which clickaway needs \(purpose). "
                 + "wlroots compositors (sway, Hyprland, river, labwc, wayfire), KDE and niri offer it; GNOME does not. "
                 + "Under Xwayland, --backend x11-grab sees X clients only.")
        } catch {
            fail("cannot set up on the Wayland display \(client.connection.display): \(error)")
        }
    }

    /// One clear message on stderr, exit status 1.
    private func fail(_ message: String) -> Never {
        StandardStreams.error(message.contains("\n") ? message : "clickaway: \(message)")
        Glibc.exit(1)
    }
}

extension Backend: ExpressibleByArgument {}
extension LogLevel: ExpressibleByArgument {}

extension Logger.Level {
    init(_ level: LogLevel) {
        switch level {
        case .error: self = .error
        case .warning: self = .warning
        case .info: self = .info
        case .debug: self = .debug
        case .trace: self = .trace
        }
    }
}
