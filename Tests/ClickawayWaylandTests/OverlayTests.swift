import ClickawayCore
import ClickawayWayland
import Testing
import WaylandHarness

@Suite struct OverlayTests {
    @Test func overlayCoversTheOutputAndCatchesClicks() throws {
        try withScene { scene in
            #expect(scene.overlay.coveredOutputs.map(\.description) == ["HEADLESS-1 at \(Rect(x: 0, y: 0, width: 1280, height: 720))"])
            try scene.pointer.click(x: 640, y: 360)
            let clicks = try scene.overlayClicks(2)
            #expect(clicks.essentials.elementsEqual(leftClick("HEADLESS-1", 640, 360), by: ==))
            #expect(clicks[0].serial != clicks[1].serial)
            #expect(try scene.below.clicks() == [])
        }
    }

    @Test func clickOutsideTheHolesLandsOnTheOverlayOnly() throws {
        try withScene { scene in
            try scene.setHoles([Rect(x: 100, y: 100, width: 200, height: 100)])
            try scene.pointer.click(x: 900, y: 50, button: PointerButton.right)
            let clicks = try scene.overlayClicks(2)
            #expect(clicks.essentials.elementsEqual(
                [("HEADLESS-1", 900, 50, PointerButton.right, true), ("HEADLESS-1", 900, 50, PointerButton.right, false)], by: ==))
            #expect(try scene.below.clicks() == [])
        }
    }

    @Test func clickInAHoleReachesTheClientBelowOnly() throws {
        try withScene { scene in
            try scene.setHoles([Rect(x: 100, y: 100, width: 200, height: 100)])
            try scene.pointer.click(x: 150, y: 120)
            #expect(try scene.below.clicks() == [
                RecordedClick(x: 150, y: 120, button: PointerButton.left, isPressed: true),
                RecordedClick(x: 150, y: 120, button: PointerButton.left, isPressed: false),
            ])
            #expect(try scene.overlayClicksSoFar().isEmpty)
        }
    }

    @Test func holeEdgesAreExclusive() throws {
        try withScene { scene in
            let hole = Rect(x: 100, y: 100, width: 200, height: 100)
            try scene.setHoles([hole])
            // The last column and row inside the hole pass; one further lands on the overlay.
            try scene.pointer.click(x: 299, y: 199)
            try scene.pointer.click(x: 300, y: 150)
            try scene.pointer.click(x: 150, y: 200)
            try scene.pointer.click(x: 99, y: 150)
            #expect(try scene.below.clicks().filter(\.isPressed).map { [$0.x, $0.y] } == [[299, 199]])
            let overlay = try scene.overlayClicks(6).filter(\.isPressed).map { [$0.x, $0.y] }
            #expect(overlay == [[300, 150], [150, 200], [99, 150]])
        }
    }

    @Test func holesChangeAtRunTime() throws {
        try withScene { scene in
            let first = Rect(x: 100, y: 100, width: 200, height: 100)
            let second = Rect(x: 700, y: 400, width: 300, height: 200)
            try scene.setHoles([first])
            try scene.pointer.click(x: 150, y: 150)
            try scene.pointer.click(x: 800, y: 500)
            #expect(try scene.below.clicks().filter(\.isPressed).map { [$0.x, $0.y] } == [[150, 150]])
            #expect(try scene.overlayClicks(2).filter(\.isPressed).map { [$0.x, $0.y] } == [[800, 500]])

            try scene.setHoles([second])
            try scene.pointer.click(x: 150, y: 150)
            try scene.pointer.click(x: 800, y: 500)
            #expect(try scene.below.clicks().filter(\.isPressed).map { [$0.x, $0.y] } == [[150, 150], [800, 500]])
            #expect(try scene.overlayClicks(2).filter(\.isPressed).map { [$0.x, $0.y] } == [[150, 150]])

            // No holes: the overlay takes every click.
            try scene.setHoles([])
            try scene.pointer.click(x: 800, y: 500)
            #expect(try scene.overlayClicks(2).filter(\.isPressed).map { [$0.x, $0.y] } == [[800, 500]])
            #expect(try scene.below.clicks().count == 4)
        }
    }

    @Test func outputAddedAtRunTimeGetsItsOwnOverlay() throws {
        try withScene { scene in
            // A hole on HEADLESS-2 before it exists applies once it does.
            try scene.setHoles([Rect(x: 1300, y: 20, width: 100, height: 100)])
            try scene.sway.createOutput()
            #expect(try scene.sway.outputNames() == ["HEADLESS-1", "HEADLESS-2"])
            let second = Rect(x: 1280, y: 0, width: 800, height: 600)
            try scene.connection.wait(for: "the overlay to cover HEADLESS-2") {
                try scene.overlay.sync()
                return scene.overlay.coveredOutputs.contains { $0.name == "HEADLESS-2" } ? true : nil
            }
            #expect(scene.overlay.coveredOutputs.map(\.rect) == [Rect(x: 0, y: 0, width: 1280, height: 720), second])

            try scene.pointer.click(x: 1680, y: 300)
            #expect(try scene.overlayClicks(2).essentials.elementsEqual(leftClick("HEADLESS-2", 1680, 300), by: ==))
            // In the hole nothing is below on HEADLESS-2, and the overlay gets nothing either.
            try scene.pointer.click(x: 1350, y: 50)
            #expect(try scene.overlayClicksSoFar().isEmpty)
            #expect(try scene.below.clicks() == [])
        }
    }
}

@Suite struct SeatTests {
    /// The seat has a pointer only while a pointer device exists; the overlay's client must
    /// take the new wl_pointer each time one appears, or later clicks are lost.
    @Test func pointerIsTakenAgainWheneverItReappears() throws {
        let sway = try HeadlessSway()
        defer { sway.stop() }
        let overlay = try Overlay(client: WaylandClient(display: sway.waylandSocket))
        let connection = overlay.client.connection
        try connection.wait(for: "the overlay to cover HEADLESS-1") {
            try overlay.sync()
            return overlay.coveredOutputs.isEmpty ? nil : true
        }
        let seat = try #require(overlay.client.seat)
        #expect(!seat.hasPointer)

        var pointer: TestPointer? = try TestPointer(display: sway.waylandSocket)
        try connection.wait(for: "the first pointer to reach the overlay's client") { seat.hasPointer ? true : nil }
        pointer = nil
        try connection.wait(for: "the pointer to go with its device") { seat.hasPointer ? nil : true }

        pointer = try TestPointer(display: sway.waylandSocket)
        try connection.wait(for: "the second pointer to reach the overlay's client") { seat.hasPointer ? true : nil }
        try pointer?.click(x: 20, y: 30)
        var clicks: [OverlayClick] = []
        try connection.wait(for: "a click through the second pointer") {
            clicks += overlay.takeClicks()
            return clicks.count >= 2 ? true : nil
        }
        #expect(clicks.essentials.elementsEqual(leftClick("HEADLESS-1", 20, 30), by: ==))
    }
}
