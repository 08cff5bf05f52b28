import ClickawayX11
import Foundation

/// Milliseconds left until `deadline`, for poll(2); 0 once it has passed.
func millisecondsLeft(until deadline: ContinuousClock.Instant) -> Int32 {
    let left = deadline - .now
    guard left > .zero else { return 0 }
    let (seconds, attoseconds) = left.components
    return Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
}

/// Waits at most `milliseconds` for `fd` to become readable; false on timeout.
func waitReadable(_ fd: Int32, milliseconds: Int32) -> Bool {
    var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
    while true {
        let n = poll(&p, 1, milliseconds)
        if n >= 0 { return n > 0 }
        if errno != EINTR { return false }
    }
}

extension XConnection {
    /// Hands every event to `handle` until it returns a value. Drains libxcb's queue before
    /// each poll(2), since replies can pull events in without the socket staying readable.
    /// `check` runs between polls so a dead helper process fails the wait early.
    @discardableResult
    func waitForEvent<T>(
        _ what: String, timeout: Duration,
        check: () throws -> Void = {},
        _ handle: (XEvent) throws -> T?
    ) throws -> T {
        let deadline = ContinuousClock.now + timeout
        while true {
            flush()
            while let event = pollEvent() {
                if let value = try handle(event) { return value }
            }
            if let error = connectionError { throw HarnessError("\(error) while waiting for \(what)") }
            try check()
            let left = millisecondsLeft(until: deadline)
            guard left > 0 else { throw HarnessError("timed out after \(timeout) waiting for \(what)") }
            _ = waitReadable(fileDescriptor, milliseconds: min(left, 100))
        }
    }
}

/// Checks `condition` every few milliseconds until it holds; for states no event announces.
public func eventually(_ what: String, timeout: Duration, _ condition: () throws -> Bool) throws {
    let deadline = ContinuousClock.now + timeout
    while try !condition() {
        guard ContinuousClock.now < deadline else { throw HarnessError("timed out after \(timeout) waiting for \(what)") }
        usleep(2_000)
    }
}
