@testable import ClickawayDaemon
import ClickawayWayland
import Testing

/// Each display packs what it needs to answer an input into the daemon's opaque token, and
/// reads back exactly that: the displays keep nothing of what they handed out.
@Suite struct InputTokenTests {
    @Test(arguments: 0..<200) func x11TokensHoldTheWindowTheTimeAndTheState(seed: UInt64) {
        var g = SplitMix64(seed: seed)
        let token = X11Token(window: UInt32(truncatingIfNeeded: g.next()), stamp: UInt32(truncatingIfNeeded: g.next()),
                             state: UInt16(truncatingIfNeeded: g.next()))
        #expect(X11Token(token.token) == token)
    }

    @Test(arguments: 0..<200) func overlayTokensHoldTheExactPlaceAndWhatPressed(seed: UInt64) {
        var g = SplitMix64(seed: seed)
        // Global coordinates to the 1/256 pixel, as the compositor says them, across outputs
        // left of and above the first.
        func coordinate() -> Double { Double(Int32(truncatingIfNeeded: g.next() % 20_000_000) - 10_000_000) / 256 }
        let pressed: OverlayToken.Pressed = switch g.next() % 3 {
        case 0: .button(UInt32(truncatingIfNeeded: g.next() % 0x300))
        case 1: .touch(Int32(truncatingIfNeeded: g.next()))
        default: .pen
        }
        let token = OverlayToken(position: Position(x: coordinate(), y: coordinate()), pressed: pressed,
                                 button: UInt32(g.next() % 0x300), isCancelled: g.next() % 2 == 0)
        #expect(OverlayToken(token.token) == token)
    }
}
