internal import ClickawayConfig
internal import ClickawayControl
public import ClickawayCore
internal import ClickawaySystem
internal import ClickawayWayland
internal import ClickawayX11
internal import Glibc
internal import Logging

/// Starts the daemon as `clickaway` is asked to: the configuration to start with, the
/// display (Wayland when `WAYLAND_DISPLAY` is set and `auto` is asked for without
/// `--display`, else X), then the control socket, then the loop.
public enum DaemonLauncher {
    public struct Options: Sendable {
        /// `--config`: this file instead of config.toml and conf.d/*.toml.
        public var configFile: String?
        /// `--backend`, over `[settings] backend`.
        public var backend: Backend?
        /// `--log-level`, over `[settings] log_level`.
        public var logLevel: LogLevel?
        /// `--display`, instead of `$DISPLAY`.
        public var display: String?

        public init(configFile: String?, backend: Backend?, logLevel: LogLevel?, display: String?) {
            self.configFile = configFile
            self.backend = backend
            self.logLevel = logLevel
            self.display = display
        }
    }

    /// Runs until SIGTERM or SIGINT (0) or the display goes away (1); a start that fails
    /// says why on stderr and exits with its `DaemonExitStatus`.
    public static func run(_ options: Options) -> Int32 {
        // Nothing here holds what the daemon was started with: a reload frees it.
        daemon(options).run()
    }

    private static func daemon(_ options: Options) -> Daemon {
        let environment = processEnvironment()
        var logger = Logger(label: "clickaway") { DaemonLogHandler(label: $0, output: output) }
        logger.logLevel = .info

        let start = loadAtStart(options.configFile, environment: environment, logger: logger)
        logger.logLevel = Logger.Level(options.logLevel ?? start.config.model.settings.logLevel)
        for note in start.config.notes { logger.notice("\(note)") }

        let chosen = options.backend ?? start.config.model.settings.backend
        let waylandDisplay = environment.nonEmpty("WAYLAND_DISPLAY")
        let display: any Display
        if chosen == .wayland || (chosen == .auto && waylandDisplay != nil && options.display == nil) {
            display = connectWayland(waylandDisplay, model: start.config.model, environment: environment, logger: logger)
        } else {
            display = connectX(options.display, model: start.config.model, backend: chosen, logger: logger)
        }
        // The display first, then the control socket: a daemon that cannot reach its display
        // leaves nothing behind.
        Signals.install()
        let loop: PollLoop
        do { loop = try PollLoop() } catch { fail("cannot create the event loop (epoll_create1): \(error)", .failure) }
        let control: ControlServer
        do {
            control = try ControlServer(directory: try ControlPath.directory(environment: environment), loop: loop)
        } catch {
            fail("\(error)", (error as? ControlServer.Failure)?.alreadyRunning == true ? .alreadyRunning : .failure)
        }
        return Daemon(display: display, config: start.config, configFile: options.configFile, backend: options.backend,
                      running: start.running, startErrors: start.errors, loop: loop, control: control,
                      notifier: SystemdNotifier(environment: environment), logger: logger)
    }

    /// The configuration to start with. Nothing in the files stops the daemon: with errors it
    /// runs with the last configuration that loaded (or none), says so, and the watcher
    /// applies the files once they are fixed. A configuration that loads is kept as the last good one.
    private static func loadAtStart(_ file: String?, environment: [String: String], logger: Logger)
        -> (config: LoadedConfig, running: RunningConfig, errors: String?) {
        let lastGood = LastGoodConfig(state: StateLocation(environment: environment), configFile: file, environment: environment)
        do {
            let loaded = try ConfigLoader.load(file: file, environment: environment)
            if let failure = lastGood.save(loaded) { logger.warning("cannot keep this configuration as the last good one: \(failure)") }
            return (loaded, .files, nil)
        } catch {
            // A file named on the command line that is not there is a mistake in the command
            // line, not a configuration to fix later: running with no popups would hide it.
            if let file, case .unreadable(_, let reason) = error {
                fail("--config \(file): cannot read it (\(reason)); name a file that exists, or leave --config out "
                     + "to read \(ConfigLocation(environment: environment).mainFile)", .usage)
            }
            let fix = "fix the errors and save: the file is watched and applied once it loads (`clickawayctl check` shows the errors)"
            switch lastGood.load() {
            case .success(let kept):
                logger.error("\(error)\nthe configuration has errors; running with the last configuration that loaded, saved \(kept.saved) in \(lastGood.path), until then: \(fix)")
                return (kept.config, .lastGood(saved: kept.saved), "\(error)")
            case .failure(let why):
                logger.error("\(error)\nthe configuration has errors; running with no popups, as there is no last good configuration to fall back on (\(why)): \(fix)")
                return (try! ConfigLoader.load([]), .none, "\(error)")
            }
        }
    }

    private static func connectX(_ name: String?, model: ClickModel, backend: Backend, logger: Logger) -> X11Display {
        let x: XConnection
        do {
            x = try XConnection(display: name)
        } catch {
            fail("\(error)", .noDisplay)
        }
        do {
            return try X11Display(x: x, model: model, mode: backend.x11Mode, logger: logger)
        } catch {
            fail("cannot set up on the X server \(x.display): \(error)", .noDisplay)
        }
    }

    /// The compositor must offer layer-shell, or be GNOME Shell with clickaway's extension;
    /// sway's IPC is used when $SWAYSOCK is set, else KWin's scripting when KWin is on the session bus.
    private static func connectWayland(_ name: String?, model: ClickModel, environment: [String: String],
                                       logger: Logger) -> any Display {
        guard let name else {
            fail("backend \"wayland\" needs WAYLAND_DISPLAY, which is not set: start clickaway inside the Wayland session "
                 + "(systemd: `systemctl --user import-environment WAYLAND_DISPLAY`)", .noDisplay)
        }
        let client: WaylandClient
        do {
            client = try WaylandClient(display: name)
        } catch {
            fail("\(error)", .noDisplay)
        }
        do {
            return try WaylandDisplay(client: client, model: model, swaySocket: environment.nonEmpty("SWAYSOCK"),
                                      sessionBus: DesktopNotifications.sessionBusAddress(environment),
                                      runtimeDirectory: environment.nonEmpty("XDG_RUNTIME_DIR"), logger: logger)
        } catch WaylandError.missingGlobal(let interface, let purpose) where interface == "zwlr_layer_shell_v1" {
            if let gnome = connectGnome(name, model: model, environment: environment, logger: logger) { return gnome }
            fail("the compositor on \(client.connection.display) does not offer \(interface), which clickaway needs \(purpose). "
                 + "wlroots compositors (sway, Hyprland, river, labwc, wayfire), KDE and niri offer it; GNOME Shell does not, and needs clickaway's extension instead (docs/gnome.md), which was not found: no org.gnome.Shell on the session bus. "
                 + "Under Xwayland, --backend x11-grab sees X clients only.", .noDisplay)
        } catch {
            fail("cannot set up on the Wayland display \(client.connection.display): \(error)", .noDisplay)
        }
    }

    /// GNOME Shell, through clickaway's extension, when it is on the session bus; nil when it is
    /// not; a GNOME Shell without a usable extension ends the start with what to run.
    private static func connectGnome(_ name: String, model: ClickModel, environment: [String: String], logger: Logger) -> GnomeDisplay? {
        guard let bus = DesktopNotifications.sessionBusAddress(environment) else { return nil }
        do {
            return try GnomeDisplay(busAddress: bus, displayName: name, model: model, logger: logger)
        } catch where error.isRunning {
            fail(error.reason, .noDisplay)
        } catch {
            logger.debug("not GNOME Shell: \(error.reason)")
            return nil
        }
    }

    /// stderr, in the journal's form when it is the journal.
    private static let output = LogOutput.standardError(environment: processEnvironment())

    /// One clear message on stderr (an error entry in the journal), and the exit status that
    /// says what kind of failure it is.
    private static func fail(_ message: String, _ status: DaemonExitStatus) -> Never {
        output.fail(message.contains("\n" as Character) ? message : "clickaway: \(message)")
        exit(status.rawValue)
    }
}

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
