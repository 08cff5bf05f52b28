import ClickawayWayland
import ProcessSupport
import Testing
import WaylandHarness

@Suite struct ConnectionTests {
    @Test func missingCompositorNamesTheDisplay() {
        let error = #expect(throws: WaylandError.self) { try WaylandConnection(display: "/nonexistent/wayland-9") }
        guard case let .cannotConnect(display, reason)? = error else {
            Issue.record("expected cannotConnect, got \(String(describing: error))")
            return
        }
        #expect(display == "/nonexistent/wayland-9")
        #expect(reason == "No such file or directory")
        #expect(error!.description == "cannot connect to Wayland display \"/nonexistent/wayland-9\": No such file or directory")
    }

    @Test func clientSeesTheGlobalsAndOutputsOfSway() throws {
        let sway = try HeadlessCompositor(.sway)
        defer { sway.stop() }
        let client = try WaylandClient(display: sway.waylandSocket)
        #expect(client.connection.display == sway.waylandSocket)
        #expect(client.connection.fileDescriptor.rawValue >= 0)
        #expect(client.outputs.map(\.description) == ["HEADLESS-1 at [0, 0, 1280, 720]"])
        #expect(client.layoutBounds == sway.outputs[0].rect)
        #expect(client.seat != nil)
        #expect(client.seat?.hasPointer == false)
        #expect(try Overlay(client: client).coveredOutputs.isEmpty)  // not configured before dispatching
    }

    /// A sync pending when everything else lets go of the connection (the compositor gone,
    /// the daemon exiting) keeps it: its callback is destroyed before the display is
    /// disconnected, not after (a use after free that crashed one exit in CI).
    @Test func aPendingSyncKeepsItsConnection() throws {
        let sway = try HeadlessCompositor(.sway)
        var client: WaylandClient? = try WaylandClient(display: sway.waylandSocket)
        weak let connection = client?.connection
        var sync: SyncPoint? = client?.connection.syncPoint()
        sway.stop()
        client = nil
        #expect(connection != nil, "the connection went while a sync on it was pending")
        #expect(sync?.isDone == false)
        sync = nil
        #expect(connection == nil)
    }

    @Test func connectionBreaksWhenTheCompositorGoes() throws {
        let sway = try HeadlessCompositor(.sway)
        let client = try WaylandClient(display: sway.waylandSocket)
        sway.stop()
        let error = #expect(throws: WaylandError.self) { try client.connection.roundtrip() }
        guard case let .connectionLost(display, _)? = error else {
            Issue.record("expected connectionLost, got \(String(describing: error))")
            return
        }
        #expect(display == sway.waylandSocket)
    }
}
