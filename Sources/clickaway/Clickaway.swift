import ClickawayConfig
import ClickawayControl
import ClickawayCore
import ClickawayWayland
import ClickawayX11
import Glibc
import Logging

@main
struct Clickaway {
    let arguments: DaemonArguments

    static func main() {
        let invocation: Invocation
        do {
            invocation = try Invocation(arguments: Array(CommandLine.arguments.dropFirst()))
        } catch {
            // As argument-parser does for clickawayctl: EX_USAGE.
            writeError("clickaway: \(error.message)\nUsage: \(DaemonHelp.usage)\n  See 'clickaway --help' for more information.")
            exit(64)
        }
        switch invocation {
        case .help: print(DaemonHelp.text)
        case .version: print("clickaway \(clickawayVersion)")
        case .completionScript(let shell): print(shell.script, terminator: "")
        // The daemon is gone once run() returns: its deinit removes the control socket.
        case .run(let arguments): exit(Clickaway(arguments: arguments).run())
        }
    }

    func run() -> Int32 {
        let environment = processEnvironment()
        var logger = Logger(label: "clickaway") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .info

        let loaded: LoadedConfig
        do {
            loaded = try ConfigLoader.load(file: arguments.config, environment: environment)
        } catch {
            fail("\(error)\nclickaway: the configuration has errors; fix them and start again (`clickawayctl check` shows them)")
        }
        logger.logLevel = Logger.Level(arguments.logLevel ?? loaded.model.settings.logLevel)
        for note in loaded.notes { logger.notice("\(note)") }

        let requested = arguments.backend
        let chosen = requested ?? loaded.model.settings.backend
        let waylandDisplay = environment["WAYLAND_DISPLAY"].flatMap { $0.isEmpty ? nil : $0 }
        let daemon: Daemon
        if chosen == .wayland || (chosen == .auto && waylandDisplay != nil && arguments.display == nil) {
            daemon = startOnWayland(waylandDisplay, loaded, backend: requested, environment: environment, logger: logger)
        } else {
            daemon = startOnX(loaded, backend: requested, environment: environment, logger: logger)
        }
        return daemon.run()
    }

    /// The display first, then the control socket: a daemon that cannot reach its display
    /// leaves nothing behind.
    private func controlServer(_ environment: [String: String]) -> ControlServer {
        Signals.install()
        do {
            return try ControlServer(directory: try ControlPath.directory(environment: environment))
        } catch {
            fail("\(error)")
        }
    }

    private func startOnX(_ loaded: LoadedConfig, backend: Backend?, environment: [String: String], logger: Logger) -> Daemon {
        let x: XConnection
        do {
            x = try XConnection(display: arguments.display)
        } catch {
            fail("\(error)")
        }
        let control = controlServer(environment)
        do {
            return try X11Daemon(x: x, config: loaded, configFile: arguments.config, backend: backend, control: control,
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
        let control = controlServer(environment)
        do {
            return try WaylandDaemon(client: client, config: loaded, configFile: arguments.config, backend: backend, control: control,
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
        writeError(message.contains("\n") ? message : "clickaway: \(message)")
        exit(1)
    }
}

/// `message` and a newline on stderr, unbuffered.
func writeError(_ message: String) {
    let text = message + "\n"
    _ = text.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
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
