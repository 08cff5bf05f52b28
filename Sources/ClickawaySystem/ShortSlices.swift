internal import CLinux
internal import Glibc
public import SystemPackage

/// Short time slices for the loop's thread, so that it takes the CPU as soon as a press wakes
/// it. On a CPU shared with a busy X server, Linux's EEVDF scheduler lets the running task
/// finish its slice (1.4 ms here) before a woken one of the same slice runs, and the server
/// then goes on to another client until the next tick: a press waited up to 4 ms for the
/// daemon to be scheduled while the server mapped another program's windows. A thread with a
/// shorter slice preempts at wakeup (Linux 6.12 and later; older kernels ignore the request).
public enum ShortSlices {
    /// The shortest slice Linux accepts.
    public static let nanoseconds: UInt64 = 100_000

    /// Asks for them for the calling thread; its policy and nice value stay, threads and
    /// processes it starts get the default slice. Nil, or why the request failed.
    public static func requestForCallingThread() -> Errno? {
        clinux_request_short_slices(nanoseconds) == 0 ? nil : Errno(rawValue: errno)
    }
}
