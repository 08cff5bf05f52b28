import ClickawaySystem
import Foundation
import ProcessSupport
import SystemPackage
import Testing

/// A thread that asks for short time slices gets them and keeps its nice value; threads it
/// starts after get the default slice, and so does the thread once it drops them.
@Suite("Short time slices")
struct ShortSlicesTests {
    /// What a thread sees of itself: its slice in ns (`se.slice`, Linux 6.6 and later), its nice value.
    struct Seen {
        var slice: Int?
        var nice: Int32
        var requestFailed: String?
        var childSlice: Int?
        var droppedSlice: Int?
    }

    static func onNewThread(_ seen: UnsafeMutablePointer<Seen>, _ body: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer?) -> Bool {
        var thread = pthread_t()
        guard pthread_create(&thread, nil, body, seen) == 0 else { return false }
        pthread_join(thread, nil)
        return true
    }

    @Test func theCallingThreadGetsShortSlicesAndKeepsItsNiceValue() {
        // One step nicer than the tests run at: allowed without privilege.
        let nicer = min(getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) + 1, 19)
        var seen = Seen(nice: nicer)
        let ran = withUnsafeMutablePointer(to: &seen) { pointer in
            Self.onNewThread(pointer) { raw in
                let seen = raw!.assumingMemoryBound(to: Seen.self)
                setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, seen.pointee.nice)
                seen.pointee.requestFailed = ShortSlices.request().map { "\($0)" }
                // Asked again on the same thread (a daemon started twice on a test's thread).
                if seen.pointee.requestFailed == nil {
                    seen.pointee.requestFailed = ShortSlices.request().map { "again: \($0)" }
                }
                seen.pointee.slice = TimeSlice.of()
                seen.pointee.nice = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
                // A thread it starts: the default slice again.
                var child = Seen(nice: -1)
                _ = withUnsafeMutablePointer(to: &child) { childPointer in
                    ShortSlicesTests.onNewThread(childPointer) { raw in
                        raw!.assumingMemoryBound(to: Seen.self).pointee.slice = TimeSlice.of()
                        return nil
                    }
                }
                seen.pointee.childSlice = child.slice
                if let failure = ShortSlices.drop() { seen.pointee.requestFailed = "dropping: \(failure)" }
                seen.pointee.droppedSlice = TimeSlice.of()
                return nil
            }
        }
        #expect(ran)
        #expect(seen.requestFailed == nil)
        #expect(seen.nice == nicer, "the request changed the thread's nice value to \(seen.nice)")
        // `se.slice` is in /proc only on kernels that show it (6.12 with the later patch, or
        // scheduler debugging before 6.14).
        if TimeSlice.kernelTakesCustomSlices, seen.slice != nil {
            #expect(seen.slice == Int(ShortSlices.nanoseconds))
            #expect(seen.childSlice != nil && seen.childSlice != Int(ShortSlices.nanoseconds),
                    "a thread started after has slices of \(seen.childSlice.map(String.init) ?? "?") ns")
            #expect(seen.droppedSlice == seen.childSlice, "dropped, the slices are \(seen.droppedSlice.map(String.init) ?? "?") ns")
        }
    }

    /// A thread named and numbered by `DetachedThread` gets them from another thread, by its
    /// id (X11's loop sets the press thread's at each change of mode), and gives them back.
    @Test func anotherThreadGetsThemByItsID() throws {
        // The thread waits until the pipe's write end is closed.
        let release = try FileDescriptor.pipe()
        let id = try DetachedThread.start(named: "slices-test") {
            var byte: UInt8 = 0
            _ = read(release.readEnd.rawValue, &byte, 1)
            try? release.readEnd.close()
        }.get()
        defer { try? release.writeEnd.close() }
        let sched = try #require(TimeSlice.schedFile(ofThread: "slices-test", in: getpid()), "no thread named slices-test")
        #expect(sched.hasSuffix("/task/\(id.description)/sched"), "the id \(id) is not the named thread's: \(sched)")
        let before = TimeSlice.of(sched)
        #expect(ShortSlices.request(for: id) == nil)
        let short = TimeSlice.of(sched)
        #expect(ShortSlices.drop(for: id) == nil)
        if TimeSlice.kernelTakesCustomSlices, before != nil {
            #expect(short == Int(ShortSlices.nanoseconds), "asked for by id, the slices are \(short.map(String.init) ?? "?") ns")
            #expect(TimeSlice.of(sched) == before, "dropped by id, the slices are not the default again")
            #expect(TimeSlice.of() == before, "the asking thread's slices changed")
        }
    }
}
