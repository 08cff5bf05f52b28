import ClickawaySystem
@testable import ClickawayDaemon
import Testing

@Suite struct SettlePacingTests {
    @Test func aShortSettleNeverMakesTheNextWait() {
        var pacing = SettlePacing()
        pacing.settled(tookMicroseconds: pacing.immediateMicroseconds - 1, now: 5_000)
        #expect(pacing.allows(now: 5_000))
    }

    @Test func aLongSettleMakesWindowsWaitInProportion() {
        var pacing = SettlePacing()
        pacing.settled(tookMicroseconds: 500, now: 10_000)
        #expect(!pacing.allows(now: 10_000 + pacing.spacing * 500 - 1))
        #expect(pacing.allows(now: 10_000 + pacing.spacing * 500))
        // The loop wakes on whole milliseconds, never before the settle is allowed.
        #expect(pacing.deadline == Deadline(milliseconds: 14))
        pacing.settled(tookMicroseconds: 10, now: 20_000)
        #expect(pacing.allows(now: 20_000))
    }
}
