import Foundation

/// A thread's time slice as Linux reports it, for the tests of who asks for short slices.
public enum TimeSlice {
    /// The slice in ns of the thread whose scheduler file is `schedFile` (`se.slice`, Linux 6.6
    /// and later): the calling thread's by default, `/proc/PID/sched` for a process's main thread.
    public static func of(_ schedFile: String = "/proc/thread-self/sched") -> Int? {
        guard let text = try? String(contentsOfFile: schedFile, encoding: .utf8) else { return nil }
        let line = text.split(separator: "\n").first { $0.hasPrefix("se.slice") }
        return line?.split(separator: ":").last.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
    }

    /// The scheduler file of process `pid`'s thread named `name` (its comm), if it has one.
    public static func schedFile(ofThread name: String, in pid: pid_t) -> String? {
        let tasks = "/proc/\(pid)/task"
        let ids = (try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? []
        let id = ids.first { id in
            (try? String(contentsOfFile: "\(tasks)/\(id)/comm", encoding: .utf8))?.trimmingCharacters(in: .newlines) == name
        }
        return id.map { "\(tasks)/\($0)/sched" }
    }

    /// Custom slices came with Linux 6.12.
    public static var kernelTakesCustomSlices: Bool {
        let release = (try? String(contentsOfFile: "/proc/sys/kernel/osrelease", encoding: .utf8)) ?? ""
        let numbers = release.split(whereSeparator: { !$0.isNumber }).prefix(2).compactMap { Int($0) }
        return numbers.count == 2 && (numbers[0], numbers[1]) >= (6, 12)
    }
}
