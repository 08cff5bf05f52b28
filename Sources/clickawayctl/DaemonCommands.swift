import ClickawayCommandLine
import ClickawayControl
import ClickawayCore
import ClickawayJSON
import ClickawaySystem

struct Reload: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Reload the configuration now; print its errors and exit 1 if it is rejected.",
        discussion: """
            A rejected configuration leaves the running one in place. --json prints the daemon's \
            reply, one object with "ok": true with "popups" and "files"; or false with "error" \
            and "diagnostics" (the errors as text).
            """)

    @Flag(name: .long, help: "Print one JSON object.")
    var json = false

    func run() throws {
        let reply = try callDaemon(.reload, onRefusal: { refusal in
            if json { print(refusal.json.text) } else if let diagnostics = refusal.diagnostics { printError(diagnostics) }
        })
        let reloaded = try understood { () throws(MalformedReply) in try ReloadReply(reply: reply) }
        if json { return print(reloaded.json.text) }
        print("reloaded: \(counted(reloaded.popups, "popup")) from \(reloaded.files.isEmpty ? "no file" : reloaded.files.joined(separator: ", "))"
            + (reloaded.waitedMs > 0 ? " (after waiting \(reloaded.waitedMs) ms for the files to stop changing)" : ""))
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
    static let configuration = CommandConfiguration(
        abstract: "Mark a rect popup open, or register a popup at run time: clicks outside it now dismiss it.",
        discussion: """
            With NAME: a rect popup of the configuration. With --rect, --window or --pid: a runtime \
            popup, which needs no configuration entry; it prints the popup's name and behaves as a \
            configured one until it is dismissed, closed (clickawayctl close NAME) or its window \
            goes. Unset keys come from --like's popup, else from [defaults]. Opening or closing a \
            rect popup runs no dismiss action.
            """)
    @Argument(help: "The popup's name.", completion: .rectPopupNames) var name: String?
    @OptionGroup var popup: RuntimePopupOptions

    func validate() throws {
        if popup.describesPlace {
            guard name == nil else { throw ValidationError("a runtime popup takes its name from --name, not from NAME") }
        } else if name == nil {
            throw ValidationError("give a configured popup's NAME, or --rect, --window or --pid")
        }
    }

    func run() throws {
        guard let name else { return try RuntimeOpen.run(popup) }
        try RectPopupCommand.run(.open(popup: name), name)
    }
}

struct Close: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Mark a rect popup (and its children) closed, or remove a runtime popup.")
    @Argument(help: "The popup's name.", completion: .rectPopupNames) var name: String
    func run() throws { try RectPopupCommand.run(.close(popup: name), name) }
}

struct Toggle: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Open a rect popup if it is closed, close it if it is open.",
        discussion: "A runtime popup is open while it exists: toggle removes it, as close does.")
    @Argument(help: "The popup's name.", completion: .rectPopupNames) var name: String
    func run() throws { try RectPopupCommand.run(.toggle(popup: name), name) }
}

struct Dismiss: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Dismiss a popup as a click outside it would: its dismiss action runs.",
        discussion: """
            For a key binding (Escape on Wayland, where clickaway cannot take the key) or a script. Any \
            popup: a rect popup, a window popup, a runtime popup. The popup and the popups nested in it \
            are dismissed: a window asked to close (or its dismiss command run), a rect popup's dismiss \
            command run and the popup marked closed, a runtime popup removed (its `wait` exits 0); \
            monitors hear "dismissed" with reason "request". Prints the popups dismissed, or that NAME \
            was not open (not an error). Unlike close, which only tells clickaway a rect popup's state.
            """)
    @Argument(help: "The popup's name.", completion: .popupNames) var name: String
    @Flag(name: .long, help: "Print the daemon's reply: one JSON object.") var json = false

    func run() throws {
        let reply = try callDaemon(.dismiss(popup: name))
        let done = try understood { () throws(MalformedReply) in try DismissReply(reply: reply) }
        if json { return print(done.json.text) }
        print(done.dismissed.isEmpty ? "\(name): not open" : "dismissed: \(done.dismissed.joined(separator: ", "))")
    }
}

struct Monitor: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the daemon's events as JSON lines until it goes away.",
        discussion: MonitorEvent.helpText + " When the daemon goes away, monitor exits 0.")

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
