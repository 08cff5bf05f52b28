import ArgumentParser
import ClickawayControl
import ClickawayJSON
import ClickawaySystem

struct Reload: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Reload the configuration now; print its errors and exit 1 if it is rejected.",
        discussion: "A rejected configuration leaves the running one in place.")

    func run() throws {
        let reply = try callDaemon(.object([("request", .string("reload"))]), onRefusal: { reply in
            if let diagnostics = reply["diagnostics"]?.stringValue { printError(diagnostics) }
        })
        let files = reply["files"]?.arrayValue?.compactMap(\.stringValue) ?? []
        print("reloaded: \(reply["popups"]?.intValue ?? 0) popups from \(files.isEmpty ? "no file" : files.joined(separator: ", "))")
    }
}

/// `open`, `close` and `toggle`: the state of a `rect` popup, as the program that shows it
/// tells clickaway. No dismiss action runs.
struct RectPopupCommand {
    static func run(_ request: String, _ name: String) throws {
        let reply = try callDaemon(.object([("request", .string(request)), ("popup", .string(name))]))
        print("\(name): \(reply["open"]?.boolValue == true ? "open" : "closed")")
    }
}

struct Open: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Mark a rect popup open: clicks outside it now dismiss it.")
    @Argument(help: "The popup's name.", completion: .rectPopupNames) var name: String
    func run() throws { try RectPopupCommand.run("open", name) }
}

struct Close: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Mark a rect popup (and its children) closed.")
    @Argument(help: "The popup's name.", completion: .rectPopupNames) var name: String
    func run() throws { try RectPopupCommand.run("close", name) }
}

struct Toggle: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Open a rect popup if it is closed, close it if it is open.")
    @Argument(help: "The popup's name.", completion: .rectPopupNames) var name: String
    func run() throws { try RectPopupCommand.run("toggle", name) }
}

struct Monitor: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the daemon's events as JSON lines until it goes away.",
        discussion: """
            Events: opened and closed (popup, window, rect), dismissed (popups, reason, button, \
            x, y, click), reloaded (cause, popups, files), rejected (cause, diagnostics), \
            grab_refused (button, modifiers, error, message).
            """)

    func run() throws {
        let client = try connectToDaemon()
        do {
            let reply = try client.call(.object([("request", .string("monitor"))]))
            guard reply["ok"]?.boolValue == true else {
                printError("clickawayctl: the daemon refused: \(reply["error"]?.stringValue ?? reply.text)")
                throw ExitCode(1)
            }
            while let event = try client.receive(timeoutMs: -1) {
                // Unbuffered: a pipe reader sees each event as it happens.
                StandardStreams.output(event.text)
            }
        } catch let error as ControlClient.Failure {
            printError("clickawayctl: \(error)")
            throw ExitCode(2)
        }
    }
}
