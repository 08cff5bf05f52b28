import ArgumentParser
import ClickawayControl
import ClickawayCore
import ClickawayJSON
import ClickawaySystem
import ClickawayTOML
import ClickawayX11

/// `clickawayctl pick`: click a window, get a `[[popup]]` block that matches it, the way
/// xprop and xwininfo pick a window. Talks to the X server, not to the daemon.
struct Pick: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Click a window and print a [[popup]] block that matches it.",
        discussion: """
            Grabs the pointer until you click: button 1 picks the window under the pointer, any \
            other button (not the wheel) cancels. Works with or without the daemon running. \
            X11 only: on sway, `swaymsg -t get_tree` shows the app_id and title to match.
            Exit status: 0 picked; 1 nothing picked (cancelled, timed out, clicked the desktop, \
            the pointer grabbed by another program); 2 the X server cannot be reached.
            """)

    @Option(name: .long, help: "The X display (default: $DISPLAY).")
    var display: String?

    @Option(name: .long, help: "Give up after this many seconds without a click.")
    var timeout: Int = 30

    @Flag(name: .long, help: "Print one JSON object instead of TOML.")
    var json = false

    func validate() throws {
        guard timeout > 0 else { throw ValidationError("--timeout is a number of seconds, at least 1") }
    }

    /// Why nothing was picked, in one sentence; exit status 1.
    struct NothingPicked: Error {
        let reason: String
    }

    func run() throws {
        let x: XConnection
        do {
            x = try XConnection(display: display)
        } catch {
            printError("clickawayctl: \(error)" + (error == .noDisplay ? "; pass --display, e.g. --display :0" : ""))
            throw ExitCode(2)
        }
        do {
            let window = try describe(x, try pick(x))
            print(json ? window.json.text : window.toml)
        } catch let failure as NothingPicked {
            printError("clickawayctl: \(failure.reason); nothing picked")
            throw ExitCode(1)
        } catch let error as XError {
            printError("clickawayctl: \(error)")
            if case .connectionLost = error { throw ExitCode(2) }
            throw ExitCode(1)
        }
    }

    /// Holds the pointer until a click and returns the top-level window (a child of the root)
    /// under it; lets go of the pointer before returning or throwing.
    private func pick(_ x: XConnection) throws -> WindowID {
        // The crosshair only tells the user what is going on: the default cursor works too.
        let cursor = try? x.createFontCursor(.crosshair)
        defer { if let cursor { x.freeCursor(cursor) } }
        if let refusal = try x.grabPointer(x.root, events: [.buttonPress, .buttonRelease], cursor: cursor) {
            throw NothingPicked(reason: "cannot grab the pointer: \(refusal)")
        }
        let press: ButtonEvent
        do {
            defer {
                x.ungrabPointer()
                x.flush()
            }
            printError("clickawayctl: click the window to describe with button 1 (another button cancels; "
                       + "giving up after \(timeout) s)")
            press = try waitForPress(x, until: Deadline(after: .seconds(timeout)))
            // Wait for the release too (bounded: the user may hold the button), so that it does
            // not reach the window under the pointer once the grab is gone.
            let releaseDeadline = Deadline(after: .seconds(5))
            while let event = try x.nextEvent(before: releaseDeadline) {
                if case let .buttonRelease(b) = event, b.button == press.button { break }
            }
        }
        // The ungrab is done before anything is printed.
        try x.sync()
        guard press.button == 1 else { throw NothingPicked(reason: "cancelled with button \(press.button)") }
        guard press.child != 0 else {
            throw NothingPicked(reason: "the click landed on the desktop (the root window), not on a window")
        }
        return press.child
    }

    /// The first press of a button other than the wheel's.
    private func waitForPress(_ x: XConnection, until deadline: Deadline) throws -> ButtonEvent {
        while let event = try x.nextEvent(before: deadline) {
            if case let .buttonPress(press) = event, !(4...7).contains(press.button) { return press }
        }
        throw NothingPicked(reason: "nobody clicked within \(timeout) s")
    }

    private func describe(_ x: XConnection, _ topLevel: WindowID) throws -> PickedWindow {
        // The daemon's window tracker finds clients with the same search.
        guard let client = try x.findClient(of: topLevel).client else {
            throw NothingPicked(reason: "window \(hex(topLevel)) under the click is no client window: nothing inside it "
                                + "has WM_STATE and it has no WM_CLASS itself, so no [[popup]] window match can find it")
        }
        do throws(XError) {
            return PickedWindow(
                client: client, topLevel: topLevel, rect: try x.rootRect(topLevel),
                properties: try x.windowProperties(client), acceptsDelete: try x.supportsDeleteWindow(client))
        } catch {
            if case .connectionLost = error { throw error }
            throw NothingPicked(reason: "window \(hex(client)) could not be read (did it just close?): \(error)")
        }
    }
}

/// What `pick` found, and the `[[popup]]` block it suggests.
struct PickedWindow {
    /// The client window (WM_STATE, or an unmanaged top-level), the one a window match looks at.
    var client: WindowID
    /// The child of the root: the client itself, or its window manager's frame.
    var topLevel: WindowID
    /// The top-level's rectangle on screen: what a window popup's rectangle will be.
    var rect: Rect
    var properties: WindowMatch.Properties
    var acceptsDelete: Bool

    var match: WindowMatch {
        WindowMatch(windowClass: properties.windowClass, instance: properties.instance, type: distinctiveType)
    }

    /// A program's popups usually share its class with its main window; a window type other
    /// than "normal" keeps the match off that main window.
    private var distinctiveType: String? {
        properties.types.first(where: WindowMatch.knownTypes.contains).flatMap { $0 == "normal" ? nil : $0 }
    }

    /// The class (else the instance) lower case, as a popup name: `[A-Za-z0-9_-]+`.
    var name: String {
        for candidate in [properties.windowClass, properties.instance].compactMap({ $0 }) {
            var name = ""
            for scalar in candidate.lowercased().unicodeScalars {
                if ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) || scalar == "_" || scalar == "-" {
                    name.unicodeScalars.append(scalar)
                } else if !name.hasSuffix("-") {
                    name += "-"
                }
            }
            let trimmed = String(name.trimming { $0 == "-" })
            if !trimmed.isEmpty { return trimmed }
        }
        return "picked"
    }

    /// "close" asks the program through WM_DELETE_WINDOW; a window that does not take that
    /// message could only be unmapped, so say so.
    var dismiss: String { acceptsDelete ? "close" : "unmap" }

    var toml: String {
        var header = "# picked window \(hex(client)) at \(rect.x),\(rect.y) \(rect.width)x\(rect.height)"
        if topLevel != client { header += " (its frame, \(hex(topLevel)))" }
        if let title = properties.title { header += ", title \(tomlString(title))" }
        var lines = [header, "[[popup]]", "name = \(tomlString(name))", "window = \(inlineTable(match))"]
        if let title = properties.title {
            var withTitle = match
            withTitle.title = title
            lines += ["# to match the title as well:", "# window = \(inlineTable(withTitle))"]
        }
        if !acceptsDelete { lines.append("# the window does not accept WM_DELETE_WINDOW, so \"close\" could only unmap it") }
        lines.append("dismiss = \(tomlString(dismiss))")
        return lines.joined(separator: "\n")
    }

    var json: JSON {
        var matchPairs: [(String, JSON)] = []
        if let c = match.windowClass { matchPairs.append(("class", .string(c))) }
        if let i = match.instance { matchPairs.append(("instance", .string(i))) }
        if let t = match.type { matchPairs.append(("type", .string(t))) }
        return .object([
            ("name", .string(name)),
            ("window", .string(hex(client))),
            ("frame", topLevel == client ? .null : .string(hex(topLevel))),
            ("rect", .array([rect.x, rect.y, rect.width, rect.height].map { .int(Int64($0)) })),
            ("class", properties.windowClass.map(JSON.string) ?? .null),
            ("instance", properties.instance.map(JSON.string) ?? .null),
            ("title", properties.title.map(JSON.string) ?? .null),
            ("types", .array(properties.types.map(JSON.string))),
            ("match", .object(matchPairs)),
            ("dismiss", .string(dismiss)),
        ])
    }

    private func inlineTable(_ m: WindowMatch) -> String {
        let pairs = [("class", m.windowClass), ("instance", m.instance), ("title", m.title), ("type", m.type)]
            .compactMap { key, value in value.map { "\(key) = \(tomlString($0))" } }
        return "{ " + pairs.joined(separator: ", ") + " }"
    }
}
