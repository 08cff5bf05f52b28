internal import CLinux
internal import Glibc
public import SystemPackage

/// Short time slices for a thread, so that it takes the CPU as soon as something wakes it.
/// On a CPU shared with a busy X server, Linux's EEVDF scheduler lets the running task finish
/// its slice (1.4 ms here) before a woken one of the same slice runs, and the server then goes
/// on to another client until the next tick: a press waited up to 4 ms for the daemon to be
/// scheduled while the server mapped another program's windows. A thread with a shorter slice
/// preempts at wakeup (Linux 6.12 and later; older kernels ignore the request), at every
/// wakeup: where most of them are not presses, that costs more than it saves (BENCHMARKS.md,
/// other clients' windows).
public enum ShortSlices {
    /// The shortest slice Linux accepts.
    public static let nanoseconds: UInt64 = 100_000

    /// Asks for them for the calling thread; its policy and nice value stay, threads and
    /// processes it starts get the default slice. Nil, or why the request failed.
    public static func requestForCallingThread() -> Errno? {
        request(nanoseconds)
    }

    /// Gives the calling thread the default slices back; nil, or why the request failed.
    public static func dropForCallingThread() -> Errno? {
        request(0)
    }

    private static func request(_ slice: UInt64) -> Errno? {
        clinux_request_short_slices(slice) == 0 ? nil : Errno(rawValue: errno)
    }
}
