import ClickawayCommandLine
import ClickawayConfig
import ClickawayControl
import ClickawayCore
import ClickawayJSON
import ClickawaySystem

/// Exit codes: `clickawayctlExitStatuses` (Manual.swift), in help and clickawayctl(1).
@main
struct ClickawayCtl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clickawayctl",
        abstract: "Check the clickaway configuration and talk to the running daemon.",
        discussion: """
            clickawayctl is the command-line companion of the clickaway(1) daemon. Without the daemon it \
            validates a configuration (check), explains offline what a press would do (hit --config), draws it \
            for the whole screen (show --svg) and describes a window to match (pick). With it, over the control socket, it shows what the daemon \
            holds (status), reloads the configuration (reload), opens and closes popups (open, close, toggle), dismisses one as a click outside would (dismiss), \
            registers popups from scripts and waits for them (open --rect/--window/--pid, wait), draws its model \
            on the screen (show), and prints the daemon's events (monitor).
            A mistyped command or option gets a "did you mean"; -c is --config wherever a file is read, -h is \
            --help and -V is --version. Messages go to standard error, results to standard output.
            """,
        version: clickawayVersionText(program: "clickawayctl"),
        subcommands: [Check.self, Hit.self, Show.self, Status.self, Sync.self, Reload.self, Open.self, Close.self, Toggle.self,
                      Dismiss.self, Wait.self, Monitor.self, Pick.self],
        exitStatuses: clickawayctlExitStatuses,
        manual: clickawayctlManual)
}

func printError(_ message: String) { StandardStreams.error(message) }

extension CompletionKind {
    /// The `rect` popups of the configuration file (the XDG lookup), the names open, close
    /// and toggle take. Read offline, without the daemon; a configuration with errors
    /// completes nothing.
    static var rectPopupNames: CompletionKind { .custom("rect-popups") { configuredPopupNames(rectOnly: true) } }

    /// Every popup of the configuration file, for `hit --open`.
    static var popupNames: CompletionKind { .custom("popups") { configuredPopupNames(rectOnly: false) } }

    private static func configuredPopupNames(rectOnly: Bool) -> [String] {
        guard let loaded = try? ConfigLoader.load(file: nil, environment: processEnvironment()) else { return [] }
        return loaded.model.popups.filter { !rectOnly || $0.fixedRect != nil }.map(\.name)
    }
}

extension StringProtocol {
    /// The text without the leading and trailing characters `trimmed` accepts.
    func trimming(while trimmed: (Character) -> Bool) -> SubSequence {
        let start = firstIndex { !trimmed($0) } ?? endIndex
        let end = lastIndex { !trimmed($0) }.map(index(after:)) ?? start
        return self[start..<end]
    }
}

struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Validate a configuration file (default: config.toml and conf.d/*.toml).",
        discussion: """
            Prints "ok: N popups, M exclusions" or the errors. Warns (on stderr, exit status 0) about \
            popups that can match the same window: such a window opens only the first. --json prints one object with "ok": true with "popups", \
            "exclusions", "files", "notes" and "warnings"; or false with "error" (the text check prints without --json) and \
            "diagnostics", each with "file", "line", "column" and "path" where known, and "message".
            """)

    @Option(name: [.customShort("c"), .long], help: ArgumentHelp("The file to check instead of the XDG lookup.", valueName: "file"),
            completion: .file(extension: "toml"))
    var config: String?

    @Argument(help: "The file to check (the same as --config).", completion: .file(extension: "toml"))
    var file: String?

    @Flag(name: .long, help: "Print one JSON object.")
    var json = false

    func validate() throws {
        if let config, let file, config != file {
            throw ValidationError("give the file once: --config \(config) or \(file)")
        }
    }

    func run() throws {
        do {
            let loaded = try ConfigLoader.load(file: config ?? file, environment: processEnvironment())
            if json {
                print(JSON.object([("ok", .bool(true)), ("popups", .int(Int64(loaded.popupCount))),
                                   ("exclusions", .int(Int64(loaded.exclusionCount))), ("files", .array(loaded.files.map(JSON.string))),
                                   ("notes", .array(loaded.notes.map { .string($0.description) })),
                                   ("warnings", .array(loaded.overlappingPopups.map { .string($0.description) }))]).text)
                return
            }
            for note in loaded.notes { printError("note: \(note)") }
            for overlap in loaded.overlappingPopups { printError("warning: \(overlap)") }
            print("ok: \(counted(loaded.popupCount, "popup")), \(counted(loaded.exclusionCount, "exclusion"))")
        } catch {
            if json { print(Self.json(error).text) } else { printError("\(error)") }
            if case .unreadable = error { throw ExitCode(2) }
            throw ExitCode(1)
        }
    }

    /// What `check --json` prints for a configuration that does not load.
    static func json(_ error: ConfigError) -> JSON {
        let diagnostics: [Diagnostic] = switch error {
        case .unreadable(let path, let reason): [Diagnostic(file: path, message: "cannot read: \(reason)")]
        case .invalid(let diagnostics): diagnostics
        }
        return .object([("ok", .bool(false)), ("error", .string(error.description)), ("diagnostics", .array(diagnostics.map { d in
            var fields: [(String, JSON)] = [("file", .string(d.file))]
            if let line = d.line { fields.append(("line", .int(Int64(line)))) }
            if let column = d.column { fields.append(("column", .int(Int64(column)))) }
            if !d.path.isEmpty { fields.append(("path", .string(d.path))) }
            fields.append(("message", .string(d.message)))
            return .object(fields)
        }))])
    }
}

struct Hit: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Explain what one press at X Y would do.",
        discussion: """
            Without --config or --open, asks the running daemon: the answer is for the popups \
            open right now. With either, works offline against a configuration: popups marked \
            with --open are open, later ones on top; each opened at time 0 and the press happens \
            at --at-ms. A window popup needs its rectangle: --open NAME=X,Y,W,H. The answer is the \
            hit path from the popup to the region, what is dismissed and what happens to the click.
            """)

    @Option(name: [.customShort("c"), .long], help: ArgumentHelp("Explain offline against this file (--open alone uses the XDG lookup).",
                                                                 valueName: "file"),
            completion: .file(extension: "toml"))
    var config: String?

    @Option(name: .long, help: "Mark a popup open: NAME, or NAME=X,Y,W,H for a window popup.", completion: .popupNames)
    var open: [String] = []

    @Option(name: .customLong("at-ms"), help: "When the press happens, in ms after the popups opened.")
    var atMs: Int64 = 10_000

    @Option(name: .long, help: "The button pressed.")
    var button: UInt8 = 1

    @Argument(help: "The press's horizontal position, in screen pixels.") var x: Int32
    @Argument(help: "The press's vertical position, in screen pixels.") var y: Int32

    @Flag(name: .long, help: "Print one JSON object.")
    var json = false

    func run() throws {
        guard config != nil || !open.isEmpty else {
            let reply = try HitReply(reply: try callDaemon(.hit(x: x, y: y, button: button)))
            print(json ? reply.explanation.text : reply.text)
            return
        }
        let engine = try OfflineEngine.load(config: config, open: open)
        let explanation = engine.explain(button: button, x: x, y: y, time: atMs)
        print(json ? explanation.json().text : explanation.humanText())
    }
}

/// Connects to the daemon's control socket; prints why and exits 2 when it cannot.
func connectToDaemon() throws -> ControlClient {
    do {
        return try ControlClient(path: try ControlPath.socket(environment: processEnvironment()))
    } catch let error as ControlPath.Missing {
        printError("clickawayctl: \(error)")
        throw ExitCode(2)
    } catch let error as ControlClient.Failure {
        printError("clickawayctl: \(error)")
        throw ExitCode(2)
    }
}

/// One request to the daemon; prints its error and exits 1 when refused, 2 when unreachable.
/// `onRefusal` sees a refusal first (for details beyond its error sentence).
func callDaemon(_ request: ControlRequest, timeoutMs: Int32 = 10_000, onRefusal: (Refusal) -> Void = { _ in }) throws -> JSON {
    let client = try connectToDaemon()
    let reply: JSON
    do {
        reply = try client.call(request.json, timeoutMs: timeoutMs)
    } catch {
        printError("clickawayctl: \(error)")
        throw ExitCode(2)
    }
    if let refusal = Refusal(reply: reply) {
        printError("clickawayctl: the daemon refused: \(refusal.message)")
        onRefusal(refusal)
        throw ExitCode(1)
    }
    return reply
}

/// A reply the daemon sent, not in the form its request's reply has: exit 2.
func understood<T>(_ decode: () throws(MalformedReply) -> T) throws -> T {
    do {
        return try decode()
    } catch {
        printError("clickawayctl: \(error)")
        throw ExitCode(2)
    }
}

struct Sync: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Wait until the daemon has handled everything the display sent before now.",
        discussion: "Everything sway's IPC sent before now too, on sway.")

    func run() throws { _ = try callDaemon(.sync) }
}

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show what the daemon tracks and holds.",
        discussion: """
            The backend; the grabs held and refused and the shield (on Wayland: the overlay's outputs \
            and holes, and sway's IPC); the open popups with their windows and rectangles (runtime \
            ones marked "(runtime)"), and runtime popups waiting for a window; sources the display \
            cannot provide; a rejected configuration's errors, and what runs instead ("running": the \
            files, or after a start with errors the last good configuration or none); the last error.
            """)

    @Flag(name: .long, help: "Print one JSON object.")
    var json = false

    func run() throws {
        let reply = try callDaemon(.status)
        print(json ? reply.text : try understood { () throws(MalformedReply) in try StatusReport(reply: reply) }.text)
    }
}
