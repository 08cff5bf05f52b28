import ClickawaySystem
import Glibc
import Testing

@Suite struct BackgroundPacerTests {
    /// The thread's voluntary context switches: each pause that sleeps is one.
    static func voluntarySwitches() -> Int {
        var usage = rusage()
        getrusage(1, &usage)  // RUSAGE_THREAD, which Glibc hides behind _GNU_SOURCE
        return usage.ru_nvcsw
    }

    /// Busy work paused often leaves the CPU about once per interval, and no more: ten
    /// milliseconds of it sleep some dozens of times, not at every call.
    @Test func pausesLeaveTheCPUOncePerInterval() {
        var pacer = BackgroundPacer()
        let before = Self.voluntarySwitches()
        let start = MonotonicClock.nanoseconds()
        var calls = 0
        while MonotonicClock.nanoseconds() - start < 10_000_000 {
            pacer.pause()
            calls += 1
        }
        let sleeps = Self.voluntarySwitches() - before
        let most = Int(10_000_000 / BackgroundPacer.interval) + 2
        #expect(sleeps >= 5, "\(sleeps) sleeps in 10 ms of work (\(calls) calls)")
        #expect(sleeps <= most + 5, "\(sleeps) sleeps in 10 ms of work: at most \(most) expected")
        #expect(calls > sleeps * 10)
    }
}
