/// A moment on `MonotonicClock` (in milliseconds) by which something is due: a wait's end,
/// a command to report, a watchdog ping.
public struct Deadline: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// Milliseconds on `MonotonicClock`.
    public let milliseconds: Int64

    public init(milliseconds: Int64) { self.milliseconds = milliseconds }

    /// `duration` from now, rounded up to the next millisecond.
    public init(after duration: Duration) {
        self.init(milliseconds: MonotonicClock.milliseconds() + Self.milliseconds(roundingUp: duration))
    }

    /// `milliseconds` from now.
    public static func inMilliseconds(_ milliseconds: Int64) -> Deadline {
        Deadline(milliseconds: MonotonicClock.milliseconds() &+ milliseconds)
    }

    public static func < (a: Deadline, b: Deadline) -> Bool { a.milliseconds < b.milliseconds }

    public func hasPassed(now: Int64 = MonotonicClock.milliseconds()) -> Bool { now >= milliseconds }

    /// Milliseconds left, 0 once passed.
    public func remaining(now: Int64 = MonotonicClock.milliseconds()) -> Int64 { max(0, milliseconds &- now) }

    /// What poll(2) and epoll_wait(2) take: the milliseconds left, 0 once passed, at most Int32.max.
    public func pollTimeout(now: Int64 = MonotonicClock.milliseconds()) -> Int32 { Int32(clamping: remaining(now: now)) }

    /// The loop's timeout for waiting until the earliest of `deadlines`: -1 (forever) when there is none.
    public static func pollTimeout(_ deadline: Deadline?, now: Int64 = MonotonicClock.milliseconds()) -> Int32 {
        deadline.map { $0.pollTimeout(now: now) } ?? -1
    }

    /// A duration in whole milliseconds, rounded up so that a wait never ends just before it.
    public static func milliseconds(roundingUp duration: Duration) -> Int64 {
        guard duration > .zero else { return 0 }
        let (seconds, attoseconds) = duration.components
        let perMillisecond: Int64 = 1_000_000_000_000_000
        return seconds.multipliedReportingOverflow(by: 1000).overflow
            ? .max : seconds * 1000 + (attoseconds + perMillisecond - 1) / perMillisecond
    }

    public var description: String { "\(milliseconds) ms" }
}
