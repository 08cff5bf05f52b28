internal import Glibc

/// Long work on a background thread (the configuration loader) that lets the threads that
/// answer clicks run first on a CPU they share: `pause()`, called between small pieces of the
/// work (a TOML statement, a popup), takes the thread off the CPU for a moment once `interval`
/// has passed since it last did. A low priority alone is not enough: once the kernel has
/// picked such a thread it keeps the CPU until the next tick (4 ms at 250 Hz) unless something
/// wakes on that CPU, and yielding lets it be picked again at once while the X server has used
/// up its share (EEVDF picks among threads whose share is not used up); a sleep leaves the X
/// server and the daemon's loop the CPU whatever their share.
public struct BackgroundPacer {
    /// Work between pauses, in nanoseconds.
    public static let interval: Int64 = 200_000
    private var last = MonotonicClock.nanoseconds()

    public init() {}

    /// Makes the calling thread (Linux schedules threads on their own) the last to run:
    /// nice 19, SCHED_BATCH, and the shortest slices (`ShortSlices`). SCHED_BATCH never takes
    /// the CPU from another thread as it wakes (the daemon's loop was seen waiting 3 ms for
    /// it after waking it with a request); the short slices let a thread that wakes on its
    /// CPU take the CPU from it within 0.1 ms. Not SCHED_IDLE: beside a few busy processes it
    /// got the CPU so rarely that a user's reload waited up to a second, and an unprivileged
    /// thread cannot raise itself again. The pauses are still needed where nothing wakes.
    public static func lowerCallingThread() {
        setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19)
        var parameters = sched_param(sched_priority: 0)
        // SCHED_BATCH (linux/sched.h), which glibc declares only under _GNU_SOURCE.
        _ = sched_setscheduler(0, 3, &parameters)
        _ = ShortSlices.request()
    }

    /// Sleeps for a moment (the thread's timer slack, 50 µs by default, decides how long: a
    /// sleep shorter than it takes to arm the timer never leaves the CPU) once `interval` has
    /// passed since the last pause.
    public mutating func pause() {
        guard MonotonicClock.nanoseconds() - last >= Self.interval else { return }
        var moment = timespec(tv_sec: 0, tv_nsec: 1000)
        nanosleep(&moment, nil)
        last = MonotonicClock.nanoseconds()
    }
}
