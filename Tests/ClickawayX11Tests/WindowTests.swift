import ClickawayCore
import ClickawayX11
import ProcessSupport
import Testing
import XTestHarness

@Suite struct WindowTests {
    @Test func queryTreeSeesACreatedWindow() throws {
        try withXvfb { display in
            let client = try TestClient(display: display)
            let rect = Rect(x: 100, y: 80, width: 300, height: 200)
            let window = try client.createWindow(at: rect)

            let x = try XConnection(display: display)
            let rootTree = try x.queryTree(x.root)
            #expect(rootTree.children.contains(window.id))
            #expect(rootTree.parent == 0)
            let tree = try x.queryTree(window.id)
            #expect(tree.parent == x.root)
            #expect(tree.children.isEmpty)

            #expect(try x.wait(x.sendGeometry(window.id)).unwrapped().rect == rect)
            #expect(try x.rootRect(window.id) == rect)
            let origin = try x.translateCoordinates(window.id, x: 5, y: 6)
            #expect(origin.x == 105 && origin.y == 86)

            let attributes = try x.getWindowAttributes(window.id)
            #expect(attributes.mapState == .viewable)
            #expect(attributes.windowClass == .inputOutput)
            #expect(!attributes.overrideRedirect)
            #expect(attributes.allEventMasks.contains(.buttonPress))
            #expect(attributes.yourEventMask.isEmpty)
        }
    }

    @Test func laterWindowsStackOnTop() throws {
        try withXvfb { display in
            let client = try TestClient(display: display)
            let below = try client.createWindow(at: Rect(x: 0, y: 0, width: 50, height: 50))
            let above = try client.createWindow(at: Rect(x: 10, y: 10, width: 50, height: 50))
            let children = try client.connection.queryTree(client.connection.root).children
            let positions = (children.firstIndex(of: below.id), children.firstIndex(of: above.id))
            #expect(positions.0 != nil && positions.1 != nil && positions.0! < positions.1!, "QueryTree lists bottom to top")
        }
    }

    @Test func requestsOnAMissingWindowFail() throws {
        try withXvfb { display in
            let x = try XConnection(display: display)
            let error = #expect(throws: XError.self) { try x.wait(x.sendGeometry(0x3ff_fffe)).unwrapped() }
            guard case let .request(request, info)? = error else {
                Issue.record("expected a request error, got \(String(describing: error))")
                return
            }
            #expect(request == "GetGeometry")
            #expect(info.name == "BadDrawable", "GetGeometry takes a drawable")
            #expect(x.check(x.selectInput(0x3ff_fffe, .structureNotify))?.name == "BadWindow")
            // The connection survives X errors.
            try x.sync()
        }
    }

    @Test func propertiesReadBack() throws {
        try withXvfb { display in
            let client = try TestClient(display: display)
            let popup = try client.createWindow(
                at: Rect(x: 10, y: 10, width: 100, height: 100),
                wmClass: WMClass(instance: "calendar", windowClass: "Eww-calendar"),
                title: "Calendrier · 日本 ✓", type: "popup_menu", closesOnDelete: true)
            let plain = try client.createWindow(
                at: Rect(x: 200, y: 10, width: 100, height: 100),
                wmClass: WMClass(instance: "plain", windowClass: "Plain"), title: "plain")

            let x = try XConnection(display: display)
            #expect(try x.wmClass(popup.id) == WMClass(instance: "calendar", windowClass: "Eww-calendar"))
            #expect(try x.title(popup.id) == "Calendrier · 日本 ✓")
            #expect(try x.windowTypes(popup.id) == ["popup_menu"])
            #expect(try x.supportsDeleteWindow(popup.id))
            #expect(try x.windowProperties(popup.id) == WindowMatch.Properties(
                windowClass: "Eww-calendar", instance: "calendar", title: "Calendrier · 日本 ✓", types: ["popup_menu"],
                window: popup.id, pid: 0), "no _NET_WM_PID: pid 0")

            #expect(try x.windowTypes(plain.id) == [])
            #expect(try !x.supportsDeleteWindow(plain.id))
            // No window manager: nobody sets WM_STATE.
            #expect(try x.wmState(plain.id) == nil)
            #expect(try x.windowProperties(x.root) == WindowMatch.Properties(window: x.root))

            // STRING is Latin-1: é is the byte 0xE9 (an older Xlib program's WM_CLASS and
            // WM_NAME, without _NET_WM_NAME).
            try client.setLatin1(plain, StandardAtoms.wmClass, Array("r\u{E9}sum\u{E9}\0R\u{E9}sum\u{E9}\0".unicodeScalars.map { UInt8($0.value) }))
            try client.setLatin1(plain, StandardAtoms.wmName, [0x63, 0x61, 0x66, 0xE9, 0x20, 0xFF])
            try client.setLatin1(plain, x.atoms.netWMName, nil)
            #expect(try x.wmClass(plain.id) == WMClass(instance: "résumé", windowClass: "Résumé"))
            #expect(try x.title(plain.id) == "café ÿ")

            let atoms = try x.internAtoms(["_NET_WM_WINDOW_TYPE_DIALOG", "WM_PROTOCOLS"])
            #expect(atoms[1] == x.atoms.wmProtocols)
            #expect(try x.atomNames(atoms) == ["_NET_WM_WINDOW_TYPE_DIALOG", "WM_PROTOCOLS"])
        }
    }

    @Test func structureEventsOnTheRoot() throws {
        try withXvfb { display in
            let watcher = try TestClient(display: display)
            let x = watcher.connection
            #expect(x.check(x.selectInput(x.root, .substructureNotify)) == nil)

            let client = try TestClient(display: display)
            let rect = Rect(x: 30, y: 40, width: 120, height: 90)
            let window = try client.createWindow(at: rect)
            let create = try watcher.wait("CreateNotify on the root") { event in
                if case let .createNotify(e) = event, e.window == window.id { return e }
                return nil
            }
            #expect(create.parent == x.root)
            #expect(create.rect == rect)
            let map = try watcher.wait("MapNotify on the root") { event in
                if case let .mapNotify(e) = event, e.window == window.id { return e }
                return nil
            }
            #expect(map.event == x.root)
            #expect(!map.overrideRedirect)

            try client.destroy(window)
            try watcher.wait("UnmapNotify on the root") { event in
                if case let .unmapNotify(e) = event, e.window == window.id { return true }
                return nil
            }
            try watcher.wait("DestroyNotify on the root") { event in
                if case let .destroyNotify(e) = event, e.window == window.id { return true }
                return nil
            }
        }
    }

    @Test func deleteWindowClosesACooperatingClient() throws {
        try withXvfb { display in
            let client = try TestClient(display: display)
            let window = try client.createWindow(at: Rect(x: 10, y: 10, width: 80, height: 80), closesOnDelete: true)
            let daemon = try XConnection(display: display)
            daemon.sendDeleteWindow(window.id, time: 0)
            try daemon.sync()

            try client.wait("the window to destroy itself after WM_DELETE_WINDOW") { event in
                if case let .destroyNotify(d) = event, d.window == window.id { return true }
                return nil
            }
            #expect(client.deleteRequests(window) == 1)
            #expect(client.isDestroyed(window))
            #expect(try !daemon.queryTree(daemon.root).children.contains(window.id))
        }
    }

    @Test func unmapAndKillClient() throws {
        try withXvfb { display in
            let client = try TestClient(display: display)
            let a = try client.createWindow(at: Rect(x: 10, y: 10, width: 80, height: 80))
            let b = try client.createWindow(at: Rect(x: 100, y: 10, width: 80, height: 80))
            let daemon = try XConnection(display: display)

            daemon.unmapWindow(a.id)
            try daemon.sync()
            #expect(try daemon.getWindowAttributes(a.id).mapState == .unmapped)

            daemon.killClient(b.id)
            try daemon.sync()
            #expect(throws: XError.self) { try client.drain() }
            #expect(client.connection.hasError)
            #expect(try !daemon.queryTree(daemon.root).children.contains(b.id))
        }
    }
}
