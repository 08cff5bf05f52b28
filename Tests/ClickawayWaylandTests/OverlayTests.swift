import ClickawayCore
import ClickawayWayland
import ProcessSupport
import Testing
import WaylandHarness

@Suite struct OverlayTests {
    @Test(arguments: CompositorKind.tested)
    func overlayCoversTheOutputAndCatchesClicks(_ kind: CompositorKind) throws {
        try withScene(kind) { scene in
            #expect(scene.overlay.coveredOutputs.map(\.description) == ["\(scene.output) at \(Rect(x: 0, y: 0, width: 1280, height: 720))"])
            try scene.input.click(x: 640, y: 360)
            let clicks = try scene.overlayClicks(2)
            #expect(clicks.essentials.elementsEqual(scene.leftClick(640, 360), by: ==))
            #expect(clicks[0].serial != clicks[1].serial)
            #expect(try scene.below.clicks() == [])
        }
    }

    @Test(arguments: CompositorKind.tested)
    func clickOutsideTheHolesLandsOnTheOverlayOnly(_ kind: CompositorKind) throws {
        try withScene(kind) { scene in
            try scene.setHoles([Rect(x: 100, y: 100, width: 200, height: 100)])
            try scene.input.click(x: 900, y: 50, button: PointerButton.right)
            let clicks = try scene.overlayClicks(2)
            #expect(clicks.essentials.elementsEqual(
                [(scene.output, 900, 50, PointerButton.right, true), (scene.output, 900, 50, PointerButton.right, false)], by: ==))
            #expect(try scene.below.clicks() == [])
        }
    }

    @Test(arguments: CompositorKind.tested)
    func clickInAHoleReachesTheClientBelowOnly(_ kind: CompositorKind) throws {
        try withScene(kind) { scene in
            try scene.setHoles([Rect(x: 100, y: 100, width: 200, height: 100)])
            try scene.input.click(x: 150, y: 120)
            #expect(try scene.below.clicks() == [
                RecordedClick(x: 150, y: 120, button: PointerButton.left, isPressed: true),
                RecordedClick(x: 150, y: 120, button: PointerButton.left, isPressed: false),
            ])
            #expect(try scene.overlayClicksSoFar().isEmpty)
        }
    }

    @Test(arguments: CompositorKind.tested)
    func holeEdgesAreExclusive(_ kind: CompositorKind) throws {
        try withScene(kind) { scene in
            let hole = Rect(x: 100, y: 100, width: 200, height: 100)
            try scene.setHoles([hole])
            // The last column and row inside the hole pass; one further lands on the overlay.
            try scene.input.click(x: 299, y: 199)
            try scene.input.click(x: 300, y: 150)
            try scene.input.click(x: 150, y: 200)
            try scene.input.click(x: 99, y: 150)
            #expect(try scene.below.clicks().filter(\.isPressed).map { [$0.x, $0.y] } == [[299, 199]])
            let overlay = try scene.overlayClicks(6).filter(\.isPressed).map { [$0.x, $0.y] }
            #expect(overlay == [[300, 150], [150, 200], [99, 150]])
        }
    }

    /// A fraction of a pixel outside a hole is outside: the compositor hit-tests the exact
    /// point, and the overlay reports a point outside the hole even where the compositor
    /// rounds what it sends (KWin sends whole pixels, rounded).
    @Test(arguments: CompositorKind.tested)
    func subPixelEdgesOfAHole(_ kind: CompositorKind) throws {
        try withScene(kind) { scene in
            try scene.setHoles([Rect(x: 100, y: 100, width: 200, height: 100)])
            let outside = [Position(x: 99.75, y: 150.25), Position(x: 150.25, y: 99.625),
                           Position(x: 300.25, y: 150), Position(x: 150, y: 200.25)]
            let inside = [Position(x: 100.25, y: 150), Position(x: 299.75, y: 199.5)]
            for p in outside + inside { try scene.input.click(at: p) }
            let caught = try scene.overlayClicks(2 * outside.count).filter(\.isPressed)
            #expect(caught.map { [$0.x, $0.y] } == [[99, 150], [150, 99], [300, 150], [150, 200]])
            // Exact where the compositor sends exact positions; outside the hole always.
            if kind != .kwin { #expect(caught.map(\.position) == outside) }
            #expect(try scene.below.clicks().filter(\.isPressed).map { [$0.x, $0.y] } == inside.map { kind.sent($0) })
        }
    }

    /// The injector places the pointer to the 1/256 pixel, as the client below is told.
    @Test(arguments: CompositorKind.tested)
    func injectedClicksLandExactly(_ kind: CompositorKind) throws {
        try withScene(kind) { scene in
            try scene.setHoles([Rect(x: 0, y: 0, width: 1280, height: 720)])
            let points = [Position(x: 700.5, y: 500.25), Position(x: 1.00390625, y: 700.99609375), Position(x: 1279, y: 0)]
            for p in points { try scene.input.click(at: p) }
            let received = try scene.below.clicks().filter(\.isPressed)
            #expect(received.map { [$0.x, $0.y] } == points.map { kind.sent($0) })
            if kind != .kwin { #expect(received.map(\.position) == points) }
        }
    }

    @Test(arguments: CompositorKind.tested)
    func holesChangeAtRunTime(_ kind: CompositorKind) throws {
        try withScene(kind) { scene in
            let first = Rect(x: 100, y: 100, width: 200, height: 100)
            let second = Rect(x: 700, y: 400, width: 300, height: 200)
            try scene.setHoles([first])
            try scene.input.click(x: 150, y: 150)
            try scene.input.click(x: 800, y: 500)
            #expect(try scene.below.clicks().filter(\.isPressed).map { [$0.x, $0.y] } == [[150, 150]])
            #expect(try scene.overlayClicks(2).filter(\.isPressed).map { [$0.x, $0.y] } == [[800, 500]])

            try scene.setHoles([second])
            try scene.input.click(x: 150, y: 150)
            try scene.input.click(x: 800, y: 500)
            #expect(try scene.below.clicks().filter(\.isPressed).map { [$0.x, $0.y] } == [[150, 150], [800, 500]])
            #expect(try scene.overlayClicks(2).filter(\.isPressed).map { [$0.x, $0.y] } == [[150, 150]])

            // No holes: the overlay takes every click.
            try scene.setHoles([])
            try scene.input.click(x: 800, y: 500)
            #expect(try scene.overlayClicks(2).filter(\.isPressed).map { [$0.x, $0.y] } == [[800, 500]])
            #expect(try scene.below.clicks().count == 4)
        }
    }

    /// Touch points land on the overlay outside the holes and on the client below inside
    /// them. Only KWin can inject touch here.
    @Test func touchOnTheOverlayAndInAHole() throws {
        try withScene(.kwin) { scene in
            try scene.below.waitForTouch()
            let seat = scene.overlay.client.seat
            try scene.connection.wait(for: "the overlay's client to get the seat's touch") { seat?.hasTouch == true ? true : nil }
            try scene.setHoles([Rect(x: 100, y: 100, width: 200, height: 100)])
            try scene.input.tap(at: Position(x: 700, y: 500))
            try scene.input.tap(at: Position(x: 150, y: 120))
            let caught = try scene.overlayClicks(2)
            #expect(caught.map { [$0.x, $0.y] } == [[700, 500], [700, 500]])
            #expect(caught.map(\.isPressed) == [true, false])
            #expect(caught.allSatisfy { if case .touch = $0.device { true } else { false } })
            #expect(try scene.below.clicks() == [
                RecordedClick(x: 150, y: 120, button: PointerButton.left, isPressed: true, isTouch: true),
                RecordedClick(x: 150, y: 120, button: PointerButton.left, isPressed: false, isTouch: true),
            ])
        }
    }

    @Test(arguments: CompositorKind.tested)
    func tabletsAreFollowed(_ kind: CompositorKind) throws {
        try withScene(kind) { scene in
            // Every compositor here offers zwp_tablet_manager_v2; none can inject a pen.
            #expect(scene.overlay.client.seat?.hasTablets == true)
        }
    }

    @Test func outputAddedAtRunTimeGetsItsOwnOverlay() throws {
        try withScene(.sway, privateCompositor: true) { scene in
            // A hole on HEADLESS-2 before it exists applies once it does.
            try scene.setHoles([Rect(x: 1300, y: 20, width: 100, height: 100)])
            try scene.compositor.createOutput()
            #expect(try scene.compositor.outputNames() == ["HEADLESS-1", "HEADLESS-2"])
            let second = Rect(x: 1280, y: 0, width: 800, height: 600)
            try scene.connection.wait(for: "the overlay to cover HEADLESS-2") {
                try scene.overlay.sync()
                return scene.overlay.coveredOutputs.contains { $0.name == "HEADLESS-2" } ? true : nil
            }
            #expect(scene.overlay.coveredOutputs.map(\.rect) == [Rect(x: 0, y: 0, width: 1280, height: 720), second])

            try scene.input.click(x: 1680, y: 300)
            #expect(try scene.overlayClicks(2).essentials.elementsEqual(
                [("HEADLESS-2", 1680, 300, PointerButton.left, true), ("HEADLESS-2", 1680, 300, PointerButton.left, false)], by: ==))
            // In the hole nothing is below on HEADLESS-2, and the overlay gets nothing either.
            try scene.input.click(x: 1350, y: 50)
            #expect(try scene.overlayClicksSoFar().isEmpty)
            #expect(try scene.below.clicks() == [])
        }
    }
}

@Suite struct SeatTests {
    /// The seat has a pointer only while a pointer device exists; the overlay's client must
    /// take the new wl_pointer each time one appears, or later clicks are lost. On a
    /// compositor of its own: where earlier tests left the seat's focus matters here.
    @Test(arguments: CompositorKind.tested)
    func pointerIsTakenAgainWheneverItReappears(_ kind: CompositorKind) throws {
        let compositor = try HeadlessCompositor(kind)
        defer { compositor.stop() }
        do {
            let overlay = try Overlay(client: WaylandClient(display: compositor.waylandSocket))
            let connection = overlay.client.connection
            try connection.wait(for: "the overlay to cover the output") {
                try overlay.sync()
                return overlay.coveredOutputs.isEmpty ? nil : true
            }
            let seat = try #require(overlay.client.seat)
            try connection.wait(for: "no pointer before any device exists") { seat.hasPointer ? nil : true }

            var input: TestInput? = try TestInput(display: compositor.waylandSocket)
            try connection.wait(for: "the first pointer to reach the overlay's client") { seat.hasPointer ? true : nil }
            input = nil
            try connection.wait(for: "the pointer to go with its device") { seat.hasPointer ? nil : true }

            input = try TestInput(display: compositor.waylandSocket)
            try connection.wait(for: "the second pointer to reach the overlay's client") { seat.hasPointer ? true : nil }
            try input?.click(x: 20, y: 30)
            var clicks: [OverlayClick] = []
            try connection.wait(for: "a click through the second pointer (got \(clicks))") {
                clicks += overlay.takeClicks()
                return clicks.count >= 2 ? true : nil
            }
            #expect(clicks.essentials.elementsEqual(
                [(compositor.outputs[0].name, 20, 30, PointerButton.left, true), (compositor.outputs[0].name, 20, 30, PointerButton.left, false)], by: ==))
        }
    }
}
