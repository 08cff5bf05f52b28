import ClickawayCore
import ClickawayX11
import Testing

@Suite struct ExtensionTests {
    @Test func extensionsAndOutputs() throws {
        try withXvfb { display in
            let x = try XConnection(display: display)
            #expect(try x.queryExtension("XTEST") != nil)
            #expect(try x.queryExtension("NO-SUCH-EXTENSION") == nil)
            #expect(try x.requireXFixes() >= Version(2, 0))
            #expect(try x.requireRandR() >= Version(1, 3))
            #expect(throws: XError.self) { try x.requireRandR(Version(99, 0)) }

            // The daemon's read of the outputs, step by step (`OutputsRead`).
            let resources = try x.wait(x.sendScreenResources()).unwrapped()
            let infos = try resources.outputs.map { try x.wait(x.sendOutputInfo($0, at: resources.timestamp)).unwrapped() }
            let active = infos.filter(\.isActive)
            #expect(active.map(\.name) == ["screen"], "Xvfb's one output")
            let rects = try active.map { try x.wait(x.sendCrtcRect($0.crtc, at: resources.timestamp)).unwrapped() }
            #expect(OutputInfo.rectangles(active, rects) == ["screen": Rect(x: 0, y: 0, width: 1280, height: 720)])
            #expect(x.check(x.selectRandrScreenChange(x.root)) == nil)
        }
    }
}
