import ClickawaySystem
import ClickawayX11
import ProcessSupport
import SystemPackage

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
        let deadline = Deadline(after: timeout)
        while true {
            flush()
            while let event = pollEvent() {
                if let value = try handle(event) { return value }
            }
            if let error = connectionError { throw HarnessError("\(error) while waiting for \(what)") }
            try check()
            guard !deadline.hasPassed() else { throw HarnessError("timed out after \(timeout) waiting for \(what)") }
            _ = try? FileDescriptor(rawValue: fileDescriptor).wait(until: min(deadline, .inMilliseconds(100)))
        }
    }
}
