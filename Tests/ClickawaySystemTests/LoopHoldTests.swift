import ClickawaySystem
import Glibc
import Testing

@Suite struct LoopHoldTests {
    /// A sleep is wall time the thread spends off the CPU: it counts in the one, not the other.
    @Test func timeOffTheCPUIsWallTimeOnly() {
        let hold = LoopHold()
        usleep(20_000)
        let held = hold.microseconds
        #expect(held.wall >= 20_000)
        #expect(held.cpu < held.wall / 2, "\(held.cpu) µs of CPU in \(held.wall) µs asleep")
    }

    /// Work on the CPU counts in both.
    @Test func workCountsInBoth() {
        let hold = LoopHold()
        var spins = 0
        while hold.microseconds.cpu < 5_000 { spins += 1 }
        let held = hold.microseconds
        // A few microseconds' margin: the two clocks are read at different moments.
        #expect(held.cpu >= 5_000 && held.wall + 50 >= held.cpu, "\(held.cpu) µs of CPU in \(held.wall) µs after \(spins) looks")
    }
}
