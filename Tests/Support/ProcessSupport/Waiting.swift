import ClickawaySystem
import Glibc

/// Checks `condition` every `interval` until it holds, at most `timeout`; for states no
/// event announces.
public func eventually(_ what: String, timeout: Duration, every interval: Duration = .milliseconds(2),
                       _ condition: () throws -> Bool) throws {
    let deadline = Deadline(after: timeout)
    let pause = useconds_t(clamping: Deadline.milliseconds(roundingUp: interval) * 1000)
    while try !condition() {
        guard !deadline.hasPassed() else { throw HarnessError("timed out after \(timeout) waiting for \(what)") }
        usleep(pause)
    }
}
