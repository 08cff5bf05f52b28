import ClickawayCommandLine
import ClickawayControl
import ClickawayCore
import ClickawayJSON
import ClickawaySystem
import Glibc

/// Where a runtime popup is and its popup keys, as `open` and `wait` take them.
struct RuntimePopupOptions: ParsableArguments {
    @Option(help: ArgumentHelp("A screen rectangle: the popup is open until dismissed or closed.", valueName: "x,y,w,h"))
    var rect: String?

    @Option(help: "With --rect: coordinates relative to this output (xrandr's or sway's name).")
    var output: String?

    @Option(help: ArgumentHelp("A window on screen: an X window id (0x... or decimal), or sway's con_id.", valueName: "id"))
    var window: String?

    @Option(help: ArgumentHelp("The first top-level window of this process (X11: _NET_WM_PID; sway: its pid), waited for.",
                               valueName: "pid"))
    var pid: Int32?

    @Option(help: ArgumentHelp("With --pid: how long to wait for the window, in seconds (at most 60).", valueName: "seconds"))
    var timeout: Double = Double(RuntimePopupRequest.defaultTimeoutMs) / 1000

    @Option(help: "The popup's name (default: runtime-N, printed).")
    var name: String?

    @Option(help: ArgumentHelp("Start from this popup's keys (regions, anchors, options).", valueName: "popup"),
            completion: .popupNames)
    var like: String?

    @Option(help: ArgumentHelp("Nest in this popup: a click inside this one is inside it too.", valueName: "popup"),
            completion: .popupNames)
    var parent: String?

    @Option(help: ArgumentHelp("A rectangle where a click counts as inside (repeat for more).", valueName: "x,y,w,h"))
    var anchor: [String] = []

    /// One option for each popup key a request may set, made from its row.
    private let keys: [(key: String, option: KeyOption)]
    private let keyOptions: ArgumentList

    @Argument(parsing: .postTerminator, help: ArgumentHelp("A command to run when it is dismissed, without a shell.", valueName: "command"))
    var command: [String] = []

    init() {
        keys = PopupFields.options.compactMap { row in row.openOption.map { (row.key, KeyOption(row.shape, $0)) } }
        keyOptions = ArgumentList(keys.map(\.option.argument))
    }

    /// Every option checked before anything is sent (without a place, `open` takes a NAME).
    func validate() throws {
        if describesPlace { _ = try request() }
    }

    /// Whether a place is given: the command registers a runtime popup.
    var describesPlace: Bool { rect != nil || window != nil || pid != nil }

    /// The socket request's fields, each checked by the same code the daemon runs.
    func request() throws -> RuntimePopupRequest {
        let places = [rect.map { _ in "--rect" }, window.map { _ in "--window" }, pid.map { _ in "--pid" }].compactMap { $0 }
        guard places.count == 1 else { throw ValidationError("give one of --rect, --window and --pid" + (places.isEmpty ? "" : ", not \(places.joined(separator: " and "))")) }
        guard output == nil || rect != nil else { throw ValidationError("--output goes with --rect") }
        guard timeout >= 0, timeout * 1000 <= Double(RuntimePopupRequest.maxTimeoutMs) else {
            throw ValidationError("--timeout is a number of seconds from 0 to \(RuntimePopupRequest.maxTimeoutMs / 1000)")
        }
        var fields: [(String, JSON)] = [("request", .string("add"))]
        if let name { fields.append(("popup", .string(name))) }
        if let rect { fields.append(("rect", try Self.rectangle(rect, option: "--rect").json)) }
        if let output { fields.append(("output", .string(output))) }
        if let window { fields.append(("window", .int(try Self.windowID(window)))) }
        if let pid {
            fields += [("pid", .int(Int64(pid))), ("timeout_ms", .int(Int64((timeout * 1000).rounded())))]
        }
        if let like { fields.append(("like", .string(like))) }
        if let parent { fields.append(("parent", .string(parent))) }
        if !anchor.isEmpty { fields.append(("anchors", .array(try anchor.map { try Self.rectangle($0, option: "--anchor").json }))) }
        for (key, option) in keys {
            if let value = try option.literal() { fields.append((key, value.json)) }
        }
        if !command.isEmpty {
            guard !fields.contains(where: { $0.0 == "dismiss" }) else { throw ValidationError("give --dismiss or a command after --, not both") }
            fields.append(("dismiss", .object([("command", .array(command.map(JSON.string)))])))
        }
        do {
            return try RuntimePopupRequest(json: .object(fields), request: "open")
        } catch {
            throw ValidationError(Self.optionWords(error.description))
        }
    }

    /// How long to wait for the daemon's first answer: the window's wait and then some.
    var answerTimeoutMs: Int32 { Int32(10_000 + (pid == nil ? 0 : Int((timeout * 1000).rounded()))) }

    /// The daemon's field names in an error, as the options that set them.
    static func optionWords(_ message: String) -> String {
        var text = message
        let keys = PopupFields.options.compactMap { row in row.openOption.map { (row.key, $0.name) } }
        for (field, option) in [("anchors", "anchor"), ("popup", "name"), ("timeout_ms", "timeout")] + keys {
            text = text.replacingAll("\"\(field)\"", with: "--" + option)
        }
        for field in ["rect", "output", "window", "pid", "like", "parent"] {
            text = text.replacingAll("\"\(field)\"", with: "--\(field)")
        }
        return text
    }

    static func rectangle(_ text: String, option: String) throws -> Rect {
        let numbers = text.split(separator: ",").compactMap { Int32($0.trimming(while: \.isWhitespace)) }
        guard numbers.count == 4, numbers[2] >= 0, numbers[3] >= 0 else {
            throw ValidationError("\(option) \(text): a rectangle is X,Y,WIDTH,HEIGHT in pixels, e.g. 100,40,300,200")
        }
        return Rect(x: numbers[0], y: numbers[1], width: numbers[2], height: numbers[3])
    }

    /// `0x1a00003` (as xwininfo and xdotool print them) or decimal.
    static func windowID(_ text: String) throws -> Int64 {
        let value = text.hasPrefix("0x") || text.hasPrefix("0X") ? UInt32(text.dropFirst(2), radix: 16) : UInt32(text)
        guard let value, value > 0 else { throw ValidationError("--window \(text): a window id is 0x... (hex) or a decimal number") }
        return Int64(value)
    }
}

/// A popup key's option, as its row's shape is typed on the command line.
enum KeyOption {
    /// `--name` and `--no-name`.
    case flag(Flag<Bool?>)
    /// A choice or an action: one of its words.
    case word(Option<String?>)
    case integer(Option<Int64?>)
    /// `1,2,3`; `name` says which option in an error.
    case buttons(Option<String?>, name: String)

    init(_ shape: PopupValueShape, _ open: PopupOption.OpenOption) {
        let name = NameSpecification.customLong(open.name)
        let help = ArgumentHelp(open.help, valueName: open.valueName)
        switch shape {
        case .boolean: self = .flag(Flag(name: name, inversion: .prefixedNo, help: help))
        case .choice(let names), .action(let names): self = .word(Option(name: name, help: help, values: names))
        case .integer: self = .integer(Option(name: name, help: help))
        case .buttons: self = .buttons(Option(name: name, help: help), name: open.name)
        }
    }

    var argument: any ListedArgument {
        switch self {
        case .flag(let flag): flag
        case .word(let option), .buttons(let option, _): option
        case .integer(let option): option
        }
    }

    /// What was given, as the request writes it; nil when it was not.
    func literal() throws -> PopupLiteral? {
        switch self {
        case .flag(let flag): return flag.wrappedValue.map(PopupLiteral.boolean)
        case .word(let option): return option.wrappedValue.map(PopupLiteral.string)
        case .integer(let option): return option.wrappedValue.map(PopupLiteral.integer)
        case .buttons(let option, let name):
            guard let list = option.wrappedValue else { return nil }
            let numbers = list.split(separator: ",").map { Int64($0.trimming(while: \.isWhitespace)) }
            guard !numbers.isEmpty, numbers.allSatisfy({ $0 != nil }) else { throw ValidationError("--\(name) is a list like 1,2,3") }
            return .array(numbers.map { .integer($0!) })
        }
    }
}

extension String {
    /// Every `target` replaced, scanning by hand: `firstRange(of:)` would link the regex
    /// runtime (1.2 MB) for this one use.
    func replacingAll(_ target: String, with replacement: String) -> String {
        guard !target.isEmpty else { return self }
        var result = ""
        var rest = self[...]
        while let next = rest.first {
            if rest.hasPrefix(target) {
                result += replacement
                rest = rest.dropFirst(target.count)
            } else {
                result.append(next)
                rest = rest.dropFirst()
            }
        }
        return result
    }
}

/// `open --rect/--window/--pid`: registers the popup and prints its name.
enum RuntimeOpen {
    static func run(_ options: RuntimePopupOptions) throws {
        let request = try options.request()
        let reply = try callDaemon(.add(request), timeoutMs: options.answerTimeoutMs)
        print(try understood { () throws(MalformedReply) in try RuntimePopupReply(reply: reply) }.popup)
    }
}

/// Exit statuses of `wait` besides 0 (dismissed), 1 (refused) and 2 (unreachable).
enum WaitStatus {
    /// The popup went away without being dismissed: closed, its window gone, its parent gone, a reload.
    static let gone: Int32 = 3
    /// SIGINT and SIGTERM: the shell's 128 + the signal.
    static func interrupted(_ signal: Int32) -> Int32 { 128 + signal }
}

struct Wait: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Register a popup and wait until it is dismissed.",
        discussion: """
            Takes the same options as open --rect/--window/--pid. Prints how the popup went \
            away: "dismissed popup=NAME reason=R button=B x=X y=Y click=C" (reason outside, inside, \
            anchor or escape), or "gone popup=NAME reason=R" (closed, window-gone, parent-gone, \
            reload). Exit status: 0 dismissed; 1 refused (invalid options, no window of --pid in \
            time); 2 daemon unreachable or gone; 3 gone without being dismissed; 130 or 143 \
            (SIGINT, SIGTERM): the popup is removed first.
            """)

    @OptionGroup var popup: RuntimePopupOptions

    @Flag(name: .long, help: "Print one JSON object.")
    var json = false

    func validate() throws { _ = try popup.request() }

    func run() throws {
        let request = try popup.request()
        let client = try connectToDaemon()
        let interruption = Interruption.install()
        do {
            try client.send(ControlRequest.wait(request).json)
            let registered: String
            do {
                registered = try answer(client, interruption: interruption)
            } catch ControlClient.Failure.interrupted {
                // Still waiting for a process's window: closing the connection removes the
                // popup; with its name known, it is removed before this process exits.
                if let name = popup.name { remove(name, client) }
                throw ExitCode(WaitStatus.interrupted(Interruption.signal))
            }
            let outcome: WaitOutcome
            do {
                outcome = try ending(client, interruption: interruption)
            } catch ControlClient.Failure.interrupted {
                remove(registered, client)
                throw ExitCode(WaitStatus.interrupted(Interruption.signal))
            }
            print(json ? outcome.json.text : Self.text(outcome))
            if case .gone = outcome { throw ExitCode(WaitStatus.gone) }
        } catch let error as ControlClient.Failure {
            printError("clickawayctl: \(error)")
            throw ExitCode(2)
        }
    }

    /// The popup's name from the daemon's first answer; a refusal exits 1.
    private func answer(_ client: ControlClient, interruption: Int32) throws -> String {
        guard let reply = try client.receive(timeoutMs: popup.answerTimeoutMs, interruptedBy: interruption) else {
            printError("clickawayctl: the daemon closed the connection without answering")
            throw ExitCode(2)
        }
        if let refusal = Refusal(reply: reply) {
            printError("clickawayctl: the daemon refused: \(refusal.message)")
            throw ExitCode(1)
        }
        return try understood { () throws(MalformedReply) in try RuntimePopupReply(reply: reply) }.popup
    }

    /// Removes the popup on this connection, and waits (a little) for the daemon's last line,
    /// so that the popup is gone when this process is.
    private func remove(_ name: String, _ client: ControlClient) {
        try? client.send(ControlRequest.close(popup: name).json)
        _ = try? client.receive(timeoutMs: 2000)
    }

    /// The line that ends the wait; a refusal there (the window never came) exits 1.
    private func ending(_ client: ControlClient, interruption: Int32) throws -> WaitOutcome {
        guard let line = try client.receive(timeoutMs: -1, interruptedBy: interruption) else {
            printError("clickawayctl: the daemon went away while waiting")
            throw ExitCode(2)
        }
        if let refusal = Refusal(reply: line), line["event"] == nil {
            printError("clickawayctl: the daemon refused: \(refusal.message)")
            throw ExitCode(1)
        }
        guard let outcome = WaitOutcome(json: line) else {
            printError("clickawayctl: the daemon's last word is not understood: \(line.text)")
            throw ExitCode(2)
        }
        return outcome
    }

    static func text(_ outcome: WaitOutcome) -> String {
        switch outcome {
        case .dismissed(let popup, let reason, let button, let x, let y, let click):
            "dismissed popup=\(popup) reason=\(reason) button=\(button) x=\(x) y=\(y) click=\(click)"
        case .gone(let popup, let reason):
            "gone popup=\(popup) reason=\(reason.rawValue)"
        }
    }
}

/// SIGINT and SIGTERM while waiting: the handler only writes to a pipe, which the wait polls.
enum Interruption {
    nonisolated(unsafe) static var pipe: (read: Int32, write: Int32) = (-1, -1)
    nonisolated(unsafe) static var signal: Int32 = SIGINT

    /// The descriptor that becomes readable on SIGINT or SIGTERM.
    static func install() -> Int32 {
        var fds: [Int32] = [-1, -1]
        guard Glibc.pipe(&fds) == 0 else { return -1 }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, O_NONBLOCK)
        }
        pipe = (fds[0], fds[1])
        for signal in [SIGINT, SIGTERM] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { received in
                Interruption.signal = received
                let saved = errno
                var byte: UInt8 = 1
                _ = write(Interruption.pipe.write, &byte, 1)
                errno = saved
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            sigaction(signal, &action, nil)
        }
        return fds[0]
    }
}
