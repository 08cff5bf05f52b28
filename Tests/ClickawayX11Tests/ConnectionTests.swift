import ClickawayCore
import ClickawayX11
import ProcessSupport
import Testing
import XTestHarness

@Suite struct ConnectionTests {
    @Test func connectsAndDisconnects() throws {
        try withXvfb { display in
            let x = try XConnection(display: display)
            #expect(x.display == display)
            #expect(x.root != 0)
            #expect(x.screenRect == Rect(x: 0, y: 0, width: 1280, height: 720))
            #expect(x.fileDescriptor >= 0)
            try x.sync()
            #expect(!x.hasError)
            #expect(x.connectionError == nil)
            #expect(x.generateID() != x.generateID())
        }
    }

    @Test func emptyDisplayNameIsNoDisplay() {
        #expect(throws: XError.noDisplay) { try XConnection(display: "") }
        #expect(XError.noDisplay.description.contains("DISPLAY is not set"))
    }

    @Test func missingServerNamesTheDisplay() throws {
        // -displayfd hands out low numbers; nothing listens this high.
        let error = #expect(throws: XError.self) { try XConnection(display: ":9876") }
        guard case let .cannotConnect(display, _)? = error else {
            Issue.record("expected cannotConnect, got \(String(describing: error))")
            return
        }
        #expect(display == ":9876")
        #expect(error!.description.hasPrefix("cannot connect to X server \":9876\""))
    }

    @Test func connectionBreaksWhenTheServerGoes() throws {
        let server = try XvfbServer()
        let x = try XConnection(display: server.display)
        server.stop()
        #expect(throws: XError.self) { try x.sync() }
        #expect(x.hasError)
        #expect(x.pollEvent() == nil)
    }

    @Test func uncheckedErrorsArriveAsEvents() throws {
        try withXvfb { display in
            let x = try XConnection(display: display)
            let missing: WindowID = 0x3ff_fffe
            x.unmapWindow(missing)
            try x.sync()
            guard case let .error(error)? = x.pollQueuedEvent() else {
                Issue.record("UnmapWindow on a missing window produced no error event")
                return
            }
            #expect(error.name == "BadWindow")
            #expect(error.requestName == "UnmapWindow")
            #expect(error.resourceID == missing)
        }
    }
}
