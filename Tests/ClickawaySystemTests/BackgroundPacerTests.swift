import ClickawaySystem
import Glibc
import ProcessSupport
import Testing

@Suite struct BackgroundPacerTests {
    /// The thread's voluntary context switches (each pause that sleeps is one) and CPU time.
    static func thread() -> (switches: Int, cpu: Int64) {
        var usage = rusage()
        getrusage(1, &usage)  // RUSAGE_THREAD, which Glibc hides behind _GNU_SOURCE
        var cpu = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu)
        return (usage.ru_nvcsw, Int64(cpu.tv_sec) * 1_000_000_000 + Int64(cpu.tv_nsec))
    }

    /// Ten milliseconds of this thread's CPU time, paused at every step, leaves the CPU about
    /// once per interval of wall time: at least once per interval of that work, however busy the
    /// machine, and never more often than the interval allows.
    @Test func pausesLeaveTheCPUOncePerInterval() {
        var pacer = BackgroundPacer()
        let before = Self.thread()
        let start = MonotonicClock.nanoseconds()
        var calls = 0
        while Self.thread().cpu - before.cpu < 10_000_000 {
            pacer.pause()
            calls += 1
        }
        let wall = MonotonicClock.nanoseconds() - start
        let sleeps = Self.thread().switches - before.switches
        let fewest = Int(10_000_000 / (BackgroundPacer.interval + 100_000))
        let most = Int(wall / BackgroundPacer.interval) + 2
        #expect(sleeps >= fewest, "\(sleeps) sleeps in 10 ms of work (\(calls) calls, \(wall / 1000) µs)")
        #expect(sleeps <= most, "\(sleeps) sleeps in \(wall / 1000) µs: at most \(most) expected")
        #expect(calls > sleeps * 10)
    }

    /// The loader's thread, and only it, runs last: nice 19 with the shortest slices, under
    /// SCHED_BATCH (which it could leave again; SCHED_IDLE it could not).
    @Test func aLoweredThreadRunsLastAndOnlyIt() {
        let (policy, nice) = (sched_getscheduler(0), getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0))
        var seen = (policy: Int32(-1), nice: Int32(-1), slice: Int?.none)
        withUnsafeMutablePointer(to: &seen) { pointer in
            var thread = pthread_t()
            let started = pthread_create(&thread, nil, { raw in
                BackgroundPacer.lowerCallingThread()
                let seen = raw!.assumingMemoryBound(to: (policy: Int32, nice: Int32, slice: Int?).self)
                seen.pointee = (sched_getscheduler(0), getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0),
                                TimeSlice.of())
                return nil
            }, pointer)
            #expect(started == 0)
            pthread_join(thread, nil)
        }
        // Without SCHED_RESET_ON_FORK (0x40000000), which the short slices' request sets.
        #expect(seen.policy & ~0x4000_0000 == 3, "SCHED_BATCH is 3; the thread's policy was \(seen.policy)")
        #expect(seen.nice == 19)
        if TimeSlice.kernelTakesCustomSlices, let slice = seen.slice {
            #expect(slice == Int(ShortSlices.nanoseconds))
        }
        #expect(sched_getscheduler(0) == policy)
        #expect(getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) == nice)
    }
}
