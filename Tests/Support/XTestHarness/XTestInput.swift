import CXCB
import ClickawayX11
import ProcessSupport

/// Synthetic pointer input through the XTEST extension, on its own connection.
/// Every call returns only after the server processed the input, so the events it caused
/// have been generated (though a frozen pointer may still hold them back).
public final class XTestInput {
    private let connection: XConnection

    public init(display: String) throws {
        connection = try XConnection(display: display)
        guard try connection.queryExtension("XTEST") != nil else {
            throw HarnessError("the X server on \(display) has no XTEST extension")
        }
    }

    /// Moves the pointer to (`x`, `y`) on the root window.
    public func motion(x: Int32, y: Int32) throws {
        try fake(XCB_MOTION_NOTIFY, detail: 0, x: x, y: y)
    }

    public func press(_ button: UInt8) throws {
        try fake(XCB_BUTTON_PRESS, detail: button)
    }

    public func release(_ button: UInt8) throws {
        try fake(XCB_BUTTON_RELEASE, detail: button)
    }

    /// Holds a key down (a modifier for the clicks that follow) until `keyUp`.
    public func keyDown(_ keycode: UInt8) throws {
        try fake(XCB_KEY_PRESS, detail: keycode)
    }

    public func keyUp(_ keycode: UInt8) throws {
        try fake(XCB_KEY_RELEASE, detail: keycode)
    }

    /// Presses and releases one key.
    public func key(_ keycode: UInt8) throws {
        try fake(XCB_KEY_PRESS, detail: keycode)
        try fake(XCB_KEY_RELEASE, detail: keycode)
    }

    /// Move, press, release.
    public func click(_ button: UInt8, at x: Int32, _ y: Int32) throws {
        try motion(x: x, y: y)
        try press(button)
        try release(button)
    }

    private func fake(_ type: Int32, detail: UInt8, x: Int32 = 0, y: Int32 = 0) throws {
        // Root window and coordinates only matter for motion (detail 0: absolute).
        let root = type == XCB_MOTION_NOTIFY ? connection.root : UInt32(XCB_NONE)
        connection.withUnsafeConnection { c in
            _ = xcb_test_fake_input(c, UInt8(type), detail, UInt32(XCB_CURRENT_TIME), root, Int16(x), Int16(y), 0)
        }
        try connection.sync()
    }
}
