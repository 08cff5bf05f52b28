import Glibc

/// CLOCK_MONOTONIC in milliseconds: deadlines, watchdog pings, when popups opened on a
/// display whose events carry no usable clock.
public enum MonotonicClock {
    public static func milliseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }

    /// The same clock in microseconds, to measure short waits.
    public static func microseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
    }
}
