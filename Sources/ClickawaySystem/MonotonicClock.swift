internal import Glibc

/// CLOCK_MONOTONIC, the one clock of the program: deadlines, the watchdog, when popups
/// opened on a display whose events carry no usable clock, the X server's and Wayland's
/// input timestamps (both count on it), systemd's MONOTONIC_USEC.
public enum MonotonicClock {
    public static func nanoseconds() -> Int64 { clockNanoseconds(CLOCK_MONOTONIC) }

    public static func microseconds() -> Int64 { nanoseconds() / 1000 }

    public static func milliseconds() -> Int64 { nanoseconds() / 1_000_000 }
}

/// What `clock` reads now, in nanoseconds.
func clockNanoseconds(_ clock: clockid_t) -> Int64 {
    var now = timespec()
    clock_gettime(clock, &now)
    return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
}
