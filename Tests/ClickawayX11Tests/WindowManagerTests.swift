import ClickawayCore
import ClickawayX11
import ProcessSupport
import Testing
import XTestHarness

@Suite struct WindowManagerTests {
    @Test func openboxFramesWindows() throws {
        try withOpenbox { display in
            let client = try TestClient(display: display)
            let rect = Rect(x: 200, y: 150, width: 300, height: 200)
            let window = try client.createWindow(at: rect, closesOnDelete: true)
            let x = client.connection

            // createWindow waited for MapNotify, so the ReparentNotify before it is recorded.
            let reparent = client.events.compactMap { event -> ReparentNotify? in
                if case let .reparentNotify(r) = event, r.window == window.id { return r }
                return nil
            }.last
            let frame = try #require(reparent?.parent, "openbox never reparented the window")
            #expect(frame != x.root)

            let tree = try x.queryTree(window.id)
            #expect(tree.parent == frame)
            // The frame may be nested; its top-level ancestor is a child of the root.
            var topLevel = frame
            while true {
                let parent = try x.queryTree(topLevel).parent
                if parent == x.root { break }
                topLevel = parent
            }
            #expect(try x.queryTree(x.root).children.contains(topLevel))
            try awaitWMState(window.id, display: display, kind: .openbox)

            // The frame is the client plus decorations.
            let frameRect = try x.rootRect(topLevel)
            let clientRect = try x.rootRect(window.id)
            #expect(clientRect.width == rect.width && clientRect.height == rect.height, "client \(clientRect), asked for \(rect)")
            #expect(frameRect.width >= clientRect.width && frameRect.height > clientRect.height,
                    "frame \(frameRect) should enclose client \(clientRect)")
        }
    }

    /// openbox keeps passive grabs of its own on client windows (click to focus). A replayed
    /// press must still reach the client through them, with the root grab out of the way.
    @Test func replayUnderOpenboxReachesTheClient() throws {
        try withOpenbox { display in
            let app = try TestClient(display: display)
            let window = try app.createWindow(at: Rect(x: 200, y: 150, width: 300, height: 200))
            let clientRect = try app.connection.rootRect(window.id)
            let point = (x: clientRect.x + 40, y: clientRect.y + 30)

            let daemon = try TestClient(display: display)
            let x = daemon.connection
            #expect(x.check(x.grabButton(button: 1, modifiers: [], window: x.root, pointerMode: .sync)) == nil)
            let input = try XTestInput(display: display)
            try input.motion(x: point.x, y: point.y)
            try input.press(1)
            let press = try daemon.wait("the root grab to report the press on a framed window") { event in
                if case let .buttonPress(b) = event { return b }
                return nil
            }
            // The child is the top-level under the pointer: openbox's frame, not the client.
            #expect(press.child != window.id && press.child != 0)
            #expect((press.rootX, press.rootY) == point)

            x.allowEvents(.replayPointer, time: press.time)
            try x.sync()
            try input.release(1)
            try app.wait("the client to receive the replayed press and its release") { event in
                if case let .buttonRelease(b) = event, b.window == window.id { return true }
                return nil
            }
            #expect(app.presses(window) == [Click(button: 1, x: 40, y: 30)])
            #expect(app.releases(window) == [Click(button: 1, x: 40, y: 30)])
        }
    }
}

/// Every window manager of the end-to-end matrix starts headless with the configuration the
/// harness writes, manages a window, and leaves it where it asked to be.
@Suite struct WindowManagerMatrixTests {
    @Test(arguments: WindowManagerKind.allCases) func managesAWindowWhereItAsked(_ kind: WindowManagerKind) throws {
        try withXvfb { display in
            let wm = try WindowManager(kind, display: display)
            defer { wm.stop() }
            let client = try TestClient(display: display)
            let rect = Rect(x: 600, y: 350, width: 300, height: 200)
            let window = try client.createWindow(at: rect)
            let x = client.connection
            try awaitWMState(window.id, display: display, kind: kind)
            // xmonad and dwm give the client an X border (1 pixel) of their own: xmonad keeps the
            // requested size for the window with its border, dwm for the window without it.
            let inside = try x.wait(x.sendGeometry(window.id)).unwrapped().rect
            let placed = try x.rootRect(window.id)
            #expect([inside, placed].contains { $0.width == rect.width && $0.height == rect.height },
                    "\(kind) resized the window to \(inside) (\(placed) with its border)")
            #expect(abs(placed.x - rect.x) < 40 && abs(placed.y - rect.y) < 40, "\(kind) placed the window at \(placed)")
        }
    }
}

/// Waits for the manager to set WM_STATE on `window`, watched from a connection of its own
/// (the test client's event mask stays as it is). A viewable window need not have it yet:
/// openbox's `client_show` maps the frame first (`frame_show`), then sets WM_STATE
/// (`client_change_wm_state`), and a loaded machine showed the window in between.
private func awaitWMState(_ window: WindowID, display: String, kind: WindowManagerKind) throws {
    let watcher = try TestClient(display: display)
    let x = watcher.connection
    if let error = x.check(x.selectInput(window, [.propertyChange])) {
        throw HarnessError("cannot watch window 0x\(String(window, radix: 16)): \(error)")
    }
    if try x.wmState(window) == .normal { return }
    try watcher.wait("\(kind) to set WM_STATE (NormalState) on its client") { event -> Bool? in
        guard case let .propertyNotify(p) = event, p.window == window, p.atom == x.atoms.wmState, !p.deleted else { return nil }
        return (try? x.wmState(window)) == .normal ? true : nil
    }
}
