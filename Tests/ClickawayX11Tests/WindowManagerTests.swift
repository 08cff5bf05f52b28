import ClickawayCore
import ClickawayX11
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
            #expect(try x.wmState(window.id) == .normal)

            // The frame is the client plus decorations.
            let frameRect = try x.rootRect(topLevel)
            let clientRect = try x.rootRect(window.id)
            #expect(clientRect.width == rect.width && clientRect.height == rect.height)
            #expect(frameRect.width >= clientRect.width && frameRect.height > clientRect.height,
                    "frame \(frameRect) should enclose client \(clientRect)")
        }
    }
}
