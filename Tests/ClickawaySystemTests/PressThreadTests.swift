import ClickawaySystem
import Foundation
import SystemPackage
import Testing

/// The press thread runs its handler only with the state lock, which the loop's thread hands
/// over at its safe points (or gives up while it sleeps), and wakes the loop only when the
/// handler asks it to.
@Suite("Press thread")
struct PressThreadTests {
    /// What the handler saw; read by the test with the lock held.
    final class Seen: @unchecked Sendable {
        var runs = 0
        var wakeLoop = false
    }

    /// Hands the lock over until the handler has run `count` times, for at most 5 s.
    static func handOver(_ lock: StateLock, until count: Int, _ seen: Seen) -> Bool {
        let deadline = MonotonicClock.milliseconds() + 5000
        while seen.runs < count && MonotonicClock.milliseconds() < deadline {
            lock.handOverIfAsked()
            usleep(200)
        }
        return seen.runs == count
    }

    /// Whether the thread's wake descriptor becomes readable within `ms`.
    static func woken(_ thread: PressThread, withinMilliseconds ms: Int32) -> Bool {
        var entry = pollfd(fd: thread.pollDescriptor.rawValue, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, ms) == 1
    }

    @Test func theHandlerRunsOnlyWithTheLockAndWakesTheLoopWhenItSaysSo() throws {
        let lock = StateLock()
        lock.lock()
        let presses = try FileDescriptor.pipe()
        let seen = Seen()
        let thread = try PressThread.start(waitingOn: presses.readEnd, lock: lock) {
            var byte: UInt8 = 0
            _ = read(presses.readEnd.rawValue, &byte, 1)
            seen.runs += 1
            return seen.wakeLoop
        }.get()
        _ = try presses.writeEnd.writeAll([1])
        // Held by the loop, which reaches no safe point: the handler waits.
        usleep(50_000)
        #expect(seen.runs == 0, "the handler ran while the loop held the lock")
        #expect(Self.handOver(lock, until: 1, seen), "the handler did not run at the loop's safe points within 5 s")
        #expect(!Self.woken(thread, withinMilliseconds: 100), "the loop was woken though the handler said nothing is left for it")

        seen.wakeLoop = true
        _ = try presses.writeEnd.writeAll([1])
        #expect(Self.handOver(lock, until: 2, seen), "the second press was not handled within 5 s")
        #expect(Self.woken(thread, withinMilliseconds: 5000), "the loop was not woken within 5 s though the handler asked")
        thread.pollReturned(.readable)
        #expect(!Self.woken(thread, withinMilliseconds: 0), "the loop's wake was not drained")

        // The loop asleep (the lock given up): a press is handled at once.
        lock.unlock()
        _ = try presses.writeEnd.writeAll([1])
        #expect(Self.woken(thread, withinMilliseconds: 5000), "a press was not handled within 5 s while the loop slept")
        lock.lock()
        #expect(seen.runs == 3)
        lock.unlock()
        // Its descriptor closed, the thread handles once more and ends.
        try presses.writeEnd.close()
    }
}
