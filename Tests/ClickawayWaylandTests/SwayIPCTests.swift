import ClickawayJSON
import ClickawaySystem
import ClickawayWayland
import ProcessSupport
import Testing
import WaylandHarness

/// The daemon's sway IPC client against a real sway: framing, replies in order, events
/// after a subscription, and sway's JSON (which has fractional numbers) parsed whole.
@Suite struct SwayIPCTests {
    @Test func treeRepliesAndWindowEventsArrive() throws {
        let sway = try HeadlessCompositor(.sway)
        defer { sway.stop() }
        let events = try SwayIPC(path: sway.ipcSocket!)
        #expect(try events.call(.subscribe, #"["window"]"#)["success"]?.boolValue == true)

        let requests = try SwayIPC(path: sway.ipcSocket!)
        let tree = try requests.call(.getTree)
        #expect(tree["type"]?.stringValue == "root")
        let outputs = tree["nodes"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
        #expect(outputs.contains("HEADLESS-1"), "\(tree.text.prefix(500))")

        let window = try TestToplevel(display: sway.waylandSocket, appId: "ipc-test", title: "t", width: 200, height: 100)
        var received: [SwayIPC.Message] = []
        // The new window's event: a bounded wait on the event connection.
        let deadline = MonotonicClock.milliseconds() + 5000
        while !received.contains(where: { $0.payload["change"]?.stringValue == "new" }) {
            guard MonotonicClock.milliseconds() < deadline else {
                Issue.record("no window event within 5 s; got \(received.map(\.payload.text))")
                return
            }
            try window.dispatch()
            received += try events.read()
        }
        let new = try #require(received.first { $0.payload["change"]?.stringValue == "new" })
        #expect(new.isEvent)
        #expect(new.payload["container"]?["app_id"]?.stringValue == "ipc-test")
        // Two requests queued, two replies in their order.
        requests.send(.getOutputs)
        requests.send(.runCommand, "nop")
        var replies: [JSON] = []
        while replies.count < 2 {
            guard MonotonicClock.milliseconds() < deadline else {
                Issue.record("two replies did not come within 5 s; got \(replies.map(\.text))")
                return
            }
            try requests.flush()
            replies += try requests.read().map(\.payload)
        }
        #expect(replies[0].arrayValue?.first?["name"]?.stringValue == "HEADLESS-1")
        #expect(replies[1] == .array([.object([("success", .bool(true))])]))
    }

    @Test func refusedConnectionNamesTheSocket() {
        #expect(throws: SwayIPC.Failure.self) { try SwayIPC(path: "/nonexistent/sway-ipc.sock") }
        do {
            _ = try SwayIPC(path: "/nonexistent/sway-ipc.sock")
        } catch {
            #expect(error.description == "cannot connect to sway's IPC at /nonexistent/sway-ipc.sock ($SWAYSOCK): No such file or directory")
        }
    }

    @Test func buttonCodesMapToX11NumbersAndBack() {
        for button: UInt8 in [1, 2, 3, 8, 9] {
            #expect(PointerButton.code(x11Button: button).flatMap(PointerButton.x11Button(code:)) == button)
        }
        #expect(PointerButton.x11Button(code: PointerButton.right) == 3)
        #expect(PointerButton.x11Button(code: 0x118) == nil)
    }
}
