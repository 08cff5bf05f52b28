import ArgumentParser
import ClickawayControl
import ClickawayJSON
import ClickawaySystem

struct Reload: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Reload the configuration now; print its errors and exit 1 if it is rejected.",
        discussion: "A rejected configuration leaves the running one in place.")

    func run() throws {
        let reply = try callDaemon(.reload, onRefusal: { refusal in
            if let diagnostics = refusal.diagnostics { printError(diagnostics) }
        })
        let reloaded = try understood { () throws(MalformedReply) in try ReloadReply(reply: reply) }
        print("reloaded: \(reloaded.popups) popups from \(reloaded.files.isEmpty ? "no file" : reloaded.files.joined(separator: ", "))")
    }
}

/// `open`, `close` and `toggle`: the state of a `rect` popup, as the program that shows it
/// tells clickaway. No dismiss action runs.
struct RectPopupCommand {
    static func run(_ request: ControlRequest, _ name: String) throws {
        let reply = try callDaemon(request)
        let state = try understood { () throws(MalformedReply) in try RectPopupReply(reply: reply) }
        print("\(name): \(state.open ? "open" : "closed")")
    }
}

struct Open: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Mark a rect popup open: clicks outside it now dismiss it.")
    @Argument(help: "The popup's name.", completion: .rectPopupNames) var name: String
    func run() throws { try RectPopupCommand.run(.open(popup: name), name) }
}

struct Close: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Mark a rect popup (and its children) closed.")
    @Argument(help: "The popup's name.", completion: .rectPopupNames) var name: String
    func run() throws { try RectPopupCommand.run(.close(popup: name), name) }
}

struct Toggle: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Open a rect popup if it is closed, close it if it is open.")
    @Argument(help: "The popup's name.", completion: .rectPopupNames) var name: String
    func run() throws { try RectPopupCommand.run(.toggle(popup: name), name) }
}

struct Monitor: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the daemon's events as JSON lines until it goes away.",
        discussion: MonitorEvent.helpText)

    func run() throws {
        let client = try connectToDaemon()
        do {
            let reply = try client.call(ControlRequest.monitor.json)
            if let refusal = Refusal(reply: reply) {
                printError("clickawayctl: the daemon refused: \(refusal.message)")
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
