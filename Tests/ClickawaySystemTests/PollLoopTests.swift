import ClickawaySystem
import SystemPackage
import Testing

@Suite struct PollLoopTests {
    @Test func aWatchRunsWhenItsDescriptorIsReadableAndNotBefore() throws {
        let loop = try PollLoop()
        let (readEnd, writeEnd) = try FileDescriptor.pipe(options: [.closeOnExec, .nonBlocking])
        defer { try? readEnd.close(); try? writeEnd.close() }
        var seen: [Readiness] = []
        loop.watch(readEnd) { seen.append($0) }
        loop.schedule(LoopTimer(.inMilliseconds(20))) { _ in }
        loop.wait()
        #expect(seen.isEmpty)
        try writeEnd.writeAll([1])
        loop.wait()
        #expect(seen == [.readable])
    }

    @Test func deadlinesFireOnceDueAndOnlyThen() throws {
        let loop = try PollLoop()
        let due = Deadline.inMilliseconds(30)
        let timer = LoopTimer(due)
        var fired = 0
        loop.schedule(timer) { _ in
            fired += 1
            timer.deadline = nil
        }
        loop.runDueDeadlines()
        #expect(fired == 0)
        #expect(loop.nextDeadline == due)
        loop.wait()  // sleeps until the deadline: no descriptor is watched
        #expect(due.hasPassed())
        loop.runDueDeadlines()
        loop.runDueDeadlines()
        #expect(fired == 1)
        #expect(loop.nextDeadline == nil)
    }

    @Test func wakesAreSpacedUnlessASourceHasWorkWaiting() throws {
        let loop = try PollLoop()
        let (readEnd, writeEnd) = try FileDescriptor.pipe(options: [.closeOnExec, .nonBlocking])
        defer { try? readEnd.close(); try? writeEnd.close() }
        // Never drained: every wait finds it readable.
        try writeEnd.writeAll([1])
        var wakes = 0
        loop.watch(readEnd) { _ in wakes += 1 }
        loop.wakeSpacing = 50_000
        // Before the first wait, which does not sleep (no wake before it): the third ends at
        // least 100 ms after the first's wake.
        let first = MonotonicClock.microseconds()
        loop.wait()
        loop.wait()
        loop.wait()
        #expect(wakes == 3)
        let apart = MonotonicClock.microseconds() - first
        #expect(apart >= 100_000, "three waits took \(apart) µs: they did not keep 50 ms apart")

        // Work waiting: no sleep, however recent the last wake (a second would show).
        let busy = Recorder(readEnd, "busy")
        busy.busy = true
        loop.add(busy)
        loop.wakeSpacing = 1_000_000
        let before = MonotonicClock.microseconds()
        loop.wait()
        loop.wait()
        let took = MonotonicClock.microseconds() - before
        #expect(took < 1_000_000, "with work waiting, two waits took \(took) µs")
    }

    final class Recorder: PollSource {
        let pollDescriptor: FileDescriptor
        var busy = false
        var log: [String] = []
        let name: String
        init(_ fd: FileDescriptor, _ name: String) {
            pollDescriptor = fd
            self.name = name
        }
        func prepareToSleep() -> Bool {
            log.append("prepare")
            return busy
        }
        func pollReturned(_ readiness: Readiness) { log.append(readiness.isEmpty ? "nothing" : "ready") }
    }

    @Test func sourcesHearEveryWaitInOrderAndABusyOneKeepsTheLoopAwake() throws {
        let loop = try PollLoop()
        let (readEnd, writeEnd) = try FileDescriptor.pipe(options: [.closeOnExec, .nonBlocking])
        defer { try? readEnd.close(); try? writeEnd.close() }
        let first = Recorder(readEnd, "first")
        first.busy = true
        var order: [String] = []
        loop.add(first)
        loop.watch(readEnd) { _ in order.append("watch after \(first.log.last ?? "")") }
        // No deadline and nothing to read: only `busy` keeps this from sleeping forever.
        loop.wait()
        #expect(first.log == ["prepare", "nothing"])
        try writeEnd.writeAll([1])
        loop.wait()
        #expect(first.log == ["prepare", "nothing", "prepare", "ready"])
        #expect(order == ["watch after ready"])
    }

    @Test func aHandlerMayRemoveAnotherRegistration() throws {
        let loop = try PollLoop()
        let (readEnd, writeEnd) = try FileDescriptor.pipe(options: [.closeOnExec, .nonBlocking])
        defer { try? readEnd.close(); try? writeEnd.close() }
        var calls: [String] = []
        var second: PollLoop.Registration?
        loop.watch(readEnd) { _ in
            calls.append("first")
            if let second { loop.remove(second) }
        }
        second = loop.watch(readEnd) { _ in calls.append("second") }
        try writeEnd.writeAll([1])
        loop.wait()
        loop.wait()
        #expect(calls == ["first", "first"])
    }

    /// epoll hears what a descriptor waits for only when that changes: a source that starts
    /// and stops wanting to write is woken for it exactly while it wants to.
    @Test func whatASourceWaitsForFollowsItsWishes() throws {
        let loop = try PollLoop()
        let (readEnd, writeEnd) = try FileDescriptor.pipe(options: [.closeOnExec, .nonBlocking])
        defer { try? readEnd.close(); try? writeEnd.close() }
        var writing = false
        var seen: [Readiness] = []
        loop.watch(writeEnd, reading: { false }, writing: { writing }) { seen.append($0) }
        loop.schedule(LoopTimer(.inMilliseconds(20))) { _ in }
        loop.wait()
        #expect(seen.isEmpty, "a pipe's write end is writable, but nobody asked")
        writing = true
        loop.wait()
        #expect(seen == [.writable])
        writing = false
        loop.wait()
        #expect(seen == [.writable])
    }

    /// A descriptor watched twice stays watched when one of the two goes, and a watch that
    /// waits for nothing still hears the other end close.
    @Test func aSharedDescriptorOutlivesOneOfItsWatches() throws {
        let loop = try PollLoop()
        let (readEnd, writeEnd) = try FileDescriptor.pipe(options: [.closeOnExec, .nonBlocking])
        defer { try? readEnd.close() }
        var first: [Readiness] = []
        var second: [Readiness] = []
        let registration = loop.watch(readEnd) { first.append($0) }
        loop.watch(readEnd, reading: { false }) { second.append($0) }
        loop.remove(registration)
        try writeEnd.writeAll([1])
        loop.schedule(LoopTimer(.inMilliseconds(20))) { _ in }
        loop.wait()
        #expect(first.isEmpty)
        #expect(second.isEmpty, "it waits to read no more than it asked")
        try writeEnd.close()
        loop.wait()
        #expect(second == [.hangUp])
    }

    /// epoll takes no regular file: its watch hears an error, once, instead of never a thing.
    @Test func aDescriptorEpollRefusesHearsAnError() throws {
        let loop = try PollLoop()
        let file = try FileDescriptor.open("/proc/self/stat", .readOnly, options: .closeOnExec)
        defer { try? file.close() }
        var seen: [Readiness] = []
        loop.watch(file) { seen.append($0) }
        loop.schedule(LoopTimer(.inMilliseconds(20))) { _ in }
        loop.wait()
        loop.wait()
        #expect(seen == [.error])
    }
}
