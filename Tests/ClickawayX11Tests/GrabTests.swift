import ClickawayCore
import ClickawayX11
import ProcessSupport
import Testing
import XTestHarness

/// The daemon's grab mode end to end: a SYNC passive grab on the root window held by one
/// client ("the daemon"), a recorder window under the pointer, clicks from XTest.
@Suite struct GrabTests {
    struct Scene {
        let daemon: TestClient
        let app: TestClient
        let window: TestWindow
        let input: XTestInput
        /// A point in the window, on the root and relative to the window.
        let root = (x: Int32(250), y: Int32(180))
        let local = (x: Int32(150), y: Int32(130))

        init(_ display: String) throws {
            app = try TestClient(display: display)
            window = try app.createWindow(at: Rect(x: 100, y: 50, width: 300, height: 200))
            daemon = try TestClient(display: display)
            input = try XTestInput(display: display)
            try input.motion(x: root.x, y: root.y)
            let x = daemon.connection
            #expect(x.check(x.grabButton(button: 1, modifiers: [], window: x.root, pointerMode: .sync)) == nil)
        }

        /// Presses button 1 and returns the press the daemon got for it.
        func pressAndReceive() throws -> ButtonEvent {
            try input.press(1)
            return try daemon.wait("the grabbing client to receive the ButtonPress") { event in
                if case let .buttonPress(b) = event { return b }
                return nil
            }
        }

        /// Button events the daemon has seen so far, after a drain.
        func daemonButtons() throws -> [(press: Bool, ButtonEvent)] {
            try daemon.drain()
            return daemon.events.compactMap(\.buttonEvent)
        }
    }

    @Test func xtestClickReachesTheWindowUnderThePointer() throws {
        try withXvfb { display in
            let app = try TestClient(display: display)
            let window = try app.createWindow(at: Rect(x: 100, y: 50, width: 300, height: 200))
            let input = try XTestInput(display: display)
            try input.click(3, at: 250, 180)
            try app.drain()
            #expect(app.presses(window) == [Click(button: 3, x: 150, y: 130)])
            #expect(app.releases(window) == [Click(button: 3, x: 150, y: 130)])
        }
    }

    @Test func syncGrabThenReplayDeliversTheClickToTheWindow() throws {
        try withXvfb { display in
            let scene = try Scene(display)
            let press = try scene.pressAndReceive()
            #expect(press.button == 1)
            // owner_events false: reported on the grab window, with the top-level child under the pointer.
            #expect(press.window == scene.daemon.connection.root)
            #expect(press.child == scene.window.id)
            #expect((press.rootX, press.rootY) == scene.root)
            #expect((press.eventX, press.eventY) == scene.root)
            #expect(press.time != 0)

            // Frozen: until the daemon answers, the window sees nothing.
            try scene.app.drain()
            #expect(scene.app.presses(scene.window).isEmpty)

            scene.daemon.connection.allowEvents(.replayPointer, time: press.time)
            scene.daemon.connection.flush()
            try scene.input.release(1)

            try scene.app.drain()
            let click = Click(button: 1, x: scene.local.x, y: scene.local.y)
            #expect(scene.app.presses(scene.window) == [click])
            #expect(scene.app.releases(scene.window) == [click])
            // The replayed press is not reported to the grabber again, nor is the release.
            let seen = try scene.daemonButtons()
            #expect(seen.count == 1 && seen[0].press)
        }
    }

    @Test func syncGrabThenAsyncSwallowsTheWholeClick() throws {
        try withXvfb { display in
            let scene = try Scene(display)
            let press = try scene.pressAndReceive()
            scene.daemon.connection.allowEvents(.asyncPointer, time: press.time)
            scene.daemon.connection.flush()
            try scene.input.release(1)

            // The grab stays active until the button goes up, so the release comes to the grabber.
            let release = try scene.daemon.wait("the grabbing client to receive the ButtonRelease") { event in
                if case let .buttonRelease(b) = event { return b }
                return nil
            }
            #expect(release.button == 1)
            #expect(release.window == scene.daemon.connection.root)
            #expect(release.time >= press.time)
            // The release's state still has Button1 down: it is the state before the event.
            #expect(release.state & 0x100 != 0)

            try scene.app.drain()
            #expect(scene.app.presses(scene.window).isEmpty)
            #expect(scene.app.releases(scene.window).isEmpty)

            // The grab ended with the release: the next click is grabbed again.
            let next = try scene.pressAndReceive()
            scene.daemon.connection.allowEvents(.replayPointer, time: next.time)
            try scene.daemon.connection.sync()
            try scene.input.release(1)
            try scene.app.drain()
            #expect(scene.app.presses(scene.window).count == 1)
        }
    }

    @Test func aFrozenPointerHoldsTheReleaseBack() throws {
        try withXvfb { display in
            let scene = try Scene(display)
            let press = try scene.pressAndReceive()
            // The release happens while the daemon has not answered yet.
            try scene.input.release(1)
            let buttons = try scene.daemonButtons()
            #expect(buttons.count == 1, "the release is queued behind the freeze, not delivered")

            scene.daemon.connection.allowEvents(.replayPointer, time: press.time)
            try scene.daemon.connection.sync()
            try scene.app.drain()
            let click = Click(button: 1, x: scene.local.x, y: scene.local.y)
            #expect(scene.app.presses(scene.window) == [click])
            #expect(scene.app.releases(scene.window) == [click])
        }
    }

    @Test func ungrabbedButtonsAndModifiersPassThrough() throws {
        try withXvfb { display in
            let scene = try Scene(display)
            try scene.input.press(3)
            try scene.input.release(3)
            try scene.app.drain()
            #expect(scene.app.presses(scene.window).map(\.button) == [3])
            #expect(try scene.daemonButtons().isEmpty)

            scene.daemon.connection.ungrabButton(button: 1, modifiers: [], window: scene.daemon.connection.root)
            try scene.daemon.connection.sync()
            try scene.input.press(1)
            try scene.input.release(1)
            try scene.app.drain()
            #expect(scene.app.presses(scene.window).map(\.button) == [3, 1])
            #expect(try scene.daemonButtons().isEmpty)
        }
    }

    @Test func aSecondGrabOfTheSameCombinationIsBadAccess() throws {
        try withXvfb { display in
            let other = try TestClient(display: display)
            #expect(other.grabOnRoot(button: 1, modifiers: []) == nil)

            let daemon = try XConnection(display: display)
            let error = daemon.check(daemon.grabButton(button: 1, modifiers: [], window: daemon.root, pointerMode: .sync))
            #expect(error?.name == "BadAccess")
            #expect(error?.requestName == "GrabButton")

            // Other combinations are free; AnyModifier overlaps the held one and fails whole.
            #expect(daemon.check(daemon.grabButton(button: 1, modifiers: .mod2, window: daemon.root, pointerMode: .sync)) == nil)
            #expect(daemon.check(daemon.grabButton(button: 2, modifiers: [], window: daemon.root, pointerMode: .sync)) == nil)
            #expect(daemon.check(daemon.grabButton(button: 1, modifiers: .any, window: daemon.root, pointerMode: .sync))?.name == "BadAccess")
            // Errors on checked requests do not break the connection.
            try daemon.sync()
        }
    }

    @Test func numLockHasAModifierBit() throws {
        try withXvfb { display in
            let x = try XConnection(display: display)
            let numLock = try x.modifierMask(forKeysym: Keysym.numLock)
            let modifiers: [ModifierMask] = [.mod1, .mod2, .mod3, .mod4, .mod5]
            #expect(modifiers.contains(numLock), "NumLock mask \(numLock.rawValue) should be one of Mod1-Mod5")
            // Xvfb's default map puts NumLock on Mod2, like most desktops.
            #expect(numLock == .mod2)
            let scrollLock = try x.modifierMask(forKeysym: Keysym.scrollLock)
            #expect(scrollLock.isEmpty || modifiers.contains(scrollLock))
            #expect(try x.modifierMask(forKeysym: 0x00ff_fffe).isEmpty)
        }
    }
}
