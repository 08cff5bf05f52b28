internal import Glibc

/// How long a piece of work held the loop: wall time, and the thread's own CPU time within
/// it. The difference is time the thread spent off the CPU (another thread ran on it, or a
/// page had to be read), which no change to the work itself would take away. Logged with
/// reloads and runtime popups, where bench/bigconfig reads both.
public struct LoopHold {
    private let wallStarted = MonotonicClock.nanoseconds()
    private let cpuStarted = clockNanoseconds(CLOCK_THREAD_CPUTIME_ID)

    public init() {}

    /// Microseconds so far: of wall time, of the thread's CPU time (read first, so that its
    /// span lies within the wall time's).
    public var microseconds: (wall: Int64, cpu: Int64) {
        let cpu = clockNanoseconds(CLOCK_THREAD_CPUTIME_ID) - cpuStarted
        return ((MonotonicClock.nanoseconds() - wallStarted) / 1000, cpu / 1000)
    }
}
