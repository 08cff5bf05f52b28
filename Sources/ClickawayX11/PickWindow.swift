public import ClickawayCore
internal import ClickawaySystem

/// What `clickawayctl pick` found under a click: the window a `[[popup]]` window match
/// looks at, and where it is.
public struct PickedWindow: Sendable {
    /// The client window (WM_STATE, or an unmanaged top-level), the one a window match looks at.
    public var client: WindowID
    /// The child of the root: the client itself, or its window manager's frame.
    public var topLevel: WindowID
    /// The top-level's rectangle on screen: what a window popup's rectangle will be.
    public var rect: Rect
    public var properties: WindowMatch.Properties
    /// Whether the client takes WM_DELETE_WINDOW.
    public var acceptsDelete: Bool
    /// Whether the window is override-redirect and nobody's frame: no window manager manages
    /// it (menus, bar popups).
    public var overrideRedirect: Bool
}

/// Why nothing was picked, in one sentence.
public struct NothingPicked: Error, CustomStringConvertible, Sendable {
    public let description: String
    init(_ description: String) { self.description = description }
}

extension XConnection {
    /// Holds the pointer with a crosshair until a click, the way xprop and xwininfo pick a
    /// window: button 1 picks the window under the pointer, another button (not the wheel)
    /// cancels. `prompt` is said once the pointer is held. Lets go of the pointer before
    /// returning or throwing; throws `NothingPicked` or an `XError`.
    public func pickWindow(within timeout: Duration, prompt: () -> Void) throws -> PickedWindow {
        try describePicked(try pickTopLevel(within: timeout, prompt: prompt))
    }

    /// The top-level window (a child of the root) under a click of button 1.
    private func pickTopLevel(within timeout: Duration, prompt: () -> Void) throws -> WindowID {
        // The crosshair only tells the user what is going on: the default cursor works too.
        let cursor = try? createFontCursor(.crosshair)
        defer { if let cursor { freeCursor(cursor) } }
        if let refusal = try grabPointer(root, events: [.buttonPress, .buttonRelease], cursor: cursor) {
            throw NothingPicked("cannot grab the pointer: \(refusal)")
        }
        let press: ButtonEvent
        do {
            defer {
                ungrabPointer()
                flush()
            }
            prompt()
            press = try waitForPress(until: Deadline(after: timeout), timeout: timeout)
            // Wait for the release too (bounded: the user may hold the button), so that it does
            // not reach the window under the pointer once the grab is gone.
            let releaseDeadline = Deadline(after: .seconds(5))
            while let event = try nextEvent(before: releaseDeadline) {
                if case let .buttonRelease(b) = event, b.button == press.button { break }
            }
        }
        // The ungrab is done before anything is printed.
        try sync()
        guard press.button == 1 else { throw NothingPicked("cancelled with button \(press.button)") }
        guard press.child != 0 else { throw NothingPicked("the click landed on the desktop (the root window), not on a window") }
        return press.child
    }

    /// The first press of a button other than the wheel's.
    private func waitForPress(until deadline: Deadline, timeout: Duration) throws -> ButtonEvent {
        while let event = try nextEvent(before: deadline) {
            if case let .buttonPress(press) = event, !(4...7).contains(press.button) { return press }
        }
        throw NothingPicked("nobody clicked within \(timeout.components.seconds) s")
    }

    private func describePicked(_ topLevel: WindowID) throws -> PickedWindow {
        // The daemon's window tracker finds clients with the same search.
        let isOverrideRedirect = try getWindowAttributes(topLevel).overrideRedirect
        let search = try findClient(of: topLevel, overrideRedirect: isOverrideRedirect)
        // i3's frames are override-redirect too, with a managed client inside.
        let overrideRedirect = isOverrideRedirect && !search.managed
        guard let client = search.client else {
            throw NothingPicked("window \(hex(topLevel)) under the click is no client window: nothing inside it "
                                + "has WM_STATE and it has no WM_CLASS itself, so no [[popup]] window match can find it")
        }
        do throws(XError) {
            return PickedWindow(client: client, topLevel: topLevel, rect: try rootRect(topLevel),
                                properties: try windowProperties(client), acceptsDelete: try supportsDeleteWindow(client),
                                overrideRedirect: overrideRedirect)
        } catch {
            if case .connectionLost = error { throw error }
            throw NothingPicked("window \(hex(client)) could not be read (did it just close?): \(error)")
        }
    }
}
