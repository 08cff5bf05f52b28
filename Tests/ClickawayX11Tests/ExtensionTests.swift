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

            let outputs = try x.outputs()
            #expect(!outputs.isEmpty)
            #expect(outputs.values.contains(Rect(x: 0, y: 0, width: 1280, height: 720)), "outputs: \(outputs)")
            #expect(x.check(x.selectRandrScreenChange(x.root)) == nil)
        }
    }
}
