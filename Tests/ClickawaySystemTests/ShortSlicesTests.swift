import ClickawaySystem
import Foundation
import Testing

/// The loop's thread asks for short time slices; its nice value stays, and threads it starts
/// after get the default slice again.
@Suite("Short time slices for the loop")
struct ShortSlicesTests {
    /// What a thread sees of itself: its slice in ns (`se.slice`, Linux 6.6 and later), its nice value.
    struct Seen {
        var slice: Int?
        var nice: Int32
        var requestFailed: String?
        var childSlice: Int?
    }

    static func ownSlice() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/thread-self/sched", encoding: .utf8) else { return nil }
        let line = text.split(separator: "\n").first { $0.hasPrefix("se.slice") }
        return line?.split(separator: ":").last.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
    }

    /// Custom slices came with Linux 6.12.
    static var kernelTakesCustomSlices: Bool {
        let release = (try? String(contentsOfFile: "/proc/sys/kernel/osrelease", encoding: .utf8)) ?? ""
        let numbers = release.split(whereSeparator: { !$0.isNumber }).prefix(2).compactMap { Int($0) }
        return numbers.count == 2 && (numbers[0], numbers[1]) >= (6, 12)
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
                seen.pointee.requestFailed = ShortSlices.requestForCallingThread().map { "\($0)" }
                // Asked again on the same thread (a daemon started twice on a test's thread).
                if seen.pointee.requestFailed == nil {
                    seen.pointee.requestFailed = ShortSlices.requestForCallingThread().map { "again: \($0)" }
                }
                seen.pointee.slice = ShortSlicesTests.ownSlice()
                seen.pointee.nice = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
                // A thread it starts: the default slice again.
                var child = Seen(nice: -1)
                _ = withUnsafeMutablePointer(to: &child) { childPointer in
                    ShortSlicesTests.onNewThread(childPointer) { raw in
                        raw!.assumingMemoryBound(to: Seen.self).pointee.slice = ShortSlicesTests.ownSlice()
                        return nil
                    }
                }
                seen.pointee.childSlice = child.slice
                return nil
            }
        }
        #expect(ran)
        #expect(seen.requestFailed == nil)
        #expect(seen.nice == nicer, "the request changed the thread's nice value to \(seen.nice)")
        // `se.slice` is in /proc only on kernels that show it (6.12 with the later patch, or
        // scheduler debugging before 6.14).
        if Self.kernelTakesCustomSlices, seen.slice != nil {
            #expect(seen.slice == Int(ShortSlices.nanoseconds))
            #expect(seen.childSlice != nil && seen.childSlice != Int(ShortSlices.nanoseconds),
                    "a thread started after has slices of \(seen.childSlice.map(String.init) ?? "?") ns")
        }
    }
}
