/// A device the client drives to send input as if a user had: a wlroots virtual pointer,
/// or KWin's fake input. Requests only: flush or round-trip the connection to send them.
///
/// Compositors pick the surface under the pointer on motion only: move before every
/// button, also after an input region changed.
public protocol InputInjector: AnyObject {
    /// The protocol it speaks, for messages ("zwlr_virtual_pointer_v1", ...).
    var protocolName: String { get }
    /// Whether `touchDown`/`touchUp` inject touch points; false: they are not available.
    var injectsTouch: Bool { get }
    /// Moves the pointer to the global point, exactly (to the 1/256 pixel).
    func move(to position: Position) throws
    /// Presses or releases a button (a Linux code, see `PointerButton`) where the pointer is.
    func button(_ code: UInt32, pressed: Bool)
    /// Makes the compositor pick the surface under the pointer again without moving it: after
    /// an input region changed, wlroots would otherwise send the next click where the
    /// pointer was before (KWin picks again by itself).
    func repick()
    /// Puts a finger down at the global point.
    func touchDown(_ id: UInt32, at position: Position)
    /// Lifts a finger.
    func touchUp(_ id: UInt32)
}

extension InputInjector {
    /// Moves to `position`, then presses and releases `code` there.
    public func click(at position: Position, button code: UInt32 = PointerButton.left) throws {
        try move(to: position)
        button(code, pressed: true)
        button(code, pressed: false)
    }

    /// A tap: a finger down and up at `position` where touch can be injected.
    public func tap(at position: Position, id: UInt32 = 0) {
        touchDown(id, at: position)
        touchUp(id)
    }
}

extension WaylandClient {
    /// The compositor's way for this client to send input: a wlroots virtual pointer, or
    /// else KWin's fake input.
    public func makeInjector() throws -> any InputInjector {
        if virtualPointerManager != nil { return try VirtualPointer(client: self) }
        if offersFakeInput { return try FakeInput(client: self) }
        throw WaylandError.missingGlobal(
            interface: "zwlr_virtual_pointer_manager_v1 or org_kde_kwin_fake_input",
            purpose: "to send clicks on (KWin offers fake input only to programs it trusts: see docs/wayland.md)")
    }
}
