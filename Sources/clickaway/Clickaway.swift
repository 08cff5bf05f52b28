import ArgumentParser
import ClickawayConfig
import ClickawayControl
import ClickawayCore
import ClickawayX11
import Glibc
import Logging

@main
struct Clickaway: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clickaway",
        abstract: "Close popups when you click outside them.",
        discussion: """
            Watches pointer input on the X server, hit-tests each click against the popups \
            described in ~/.config/clickaway/config.toml, dismisses the popups a click lands \
            outside of and lets clicks inside them pass. The configuration is reloaded when \
            its files change, on SIGHUP and on `clickawayctl reload`; SIGTERM and SIGINT release \
            every grab and exit. Under systemd (Type=notify) it reports readiness and pings \
            the watchdog itself.
            """)

    @Option(name: .long, help: "Read this file instead of config.toml and conf.d/*.toml.")
    var config: String?

    @Option(name: .long, help: "auto, x11-grab or x11-shield (overrides [settings] backend).")
    var backend: String?

    @Option(name: .long, help: "error, warning, info, debug or trace (overrides [settings] log_level).")
    var logLevel: String?

    @Option(name: .long, help: "The X display to use instead of $DISPLAY.")
    var display: String?

    func run() throws {
        let environment = processEnvironment()
        var logger = Logger(label: "clickaway") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .info

        if let level = logLevel, LogLevel(rawValue: level) == nil {
            fail("--log-level must be one of \(LogLevel.allCases.map(\.rawValue).joined(separator: ", ")), not \"\(level)\"")
        }
        if let backend, Backend(rawValue: backend) == nil {
            fail("--backend must be one of \(Backend.allCases.map(\.rawValue).joined(separator: ", ")), not \"\(backend)\"")
        }

        let loaded: LoadedConfig
        do {
            loaded = try ConfigLoader.load(file: config, environment: environment)
        } catch {
            fail("\(error)\nclickaway: the configuration has errors; fix them and start again (`clickawayctl check` shows them)")
        }
        logger.logLevel = Logger.Level(LogLevel(rawValue: logLevel ?? "") ?? loaded.model.settings.logLevel)
        for note in loaded.notes { logger.notice("\(note)") }

        let x: XConnection
        do {
            x = try XConnection(display: display)
        } catch {
            fail("\(error)")
        }
        Signals.install()
        let control: ControlServer
        do {
            control = try ControlServer(directory: try ControlPath.directory(environment: environment))
        } catch {
            fail("\(error)")
        }
        let daemon: Daemon
        do {
            daemon = try Daemon(x: x, config: loaded, configFile: config, backend: backend.flatMap(Backend.init(rawValue:)),
                                control: control,
                                notifier: SystemdNotifier(environment: environment), logger: logger)
        } catch {
            fail("cannot set up on the X server \(x.display): \(error)")
        }
        let status = daemon.run()
        if status != 0 { throw ExitCode(status) }
    }

    /// One clear message on stderr, exit status 1.
    private func fail(_ message: String) -> Never {
        let text = (message.contains("\n") ? message : "clickaway: \(message)") + "\n"
        _ = text.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
        Glibc.exit(1)
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
