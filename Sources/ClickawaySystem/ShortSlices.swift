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

    /// Asks for them for `thread` (the calling thread's by default); its policy and nice value
    /// stay, threads and processes it starts get the default slice. Nil, or why the request
    /// failed.
    public static func request(for thread: ThreadID = .calling) -> Errno? {
        set(nanoseconds, for: thread)
    }

    /// Gives `thread` the default slices back; nil, or why the request failed.
    public static func drop(for thread: ThreadID = .calling) -> Errno? {
        set(0, for: thread)
    }

    private static func set(_ slice: UInt64, for thread: ThreadID) -> Errno? {
        clinux_request_short_slices(thread.rawValue, slice) == 0 ? nil : Errno(rawValue: errno)
    }
}

/// A thread of this process, as the kernel numbers it (gettid(2)).
public struct ThreadID: Equatable, Sendable, CustomStringConvertible {
    let rawValue: Int32
    /// The thread that asks.
    public static let calling = ThreadID(rawValue: 0)
    /// The calling thread's own id, to be named by another thread.
    public static var current: ThreadID { ThreadID(rawValue: clinux_thread_id()) }
    public var description: String { String(rawValue) }
}
