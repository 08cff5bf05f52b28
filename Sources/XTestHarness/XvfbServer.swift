import Foundation

/// A private Xvfb for one test: it picks a free display itself (-displayfd) and is gone
/// after `stop()` or deinit.
public final class XvfbServer {
    /// The display name, e.g. ":3".
    public let display: String
    private let process: ChildProcess

    public init(width: Int = 1280, height: Int = 720, timeout: Duration = .seconds(10)) throws {
        // -displayfd 1: Xvfb writes the display number it chose to its stdout once it
        // accepts connections.
        let (readEnd, writeEnd) = try socketPair()
        defer { close(readEnd) }
        do {
            defer { close(writeEnd) }
            process = try ChildProcess(
                ["Xvfb", "-displayfd", "1", "-screen", "0", "\(width)x\(height)x24", "-nolisten", "tcp"],
                stdout: writeEnd)
        }
        display = ":\(try Self.readDisplayNumber(readEnd, process, timeout: timeout))"
    }

    deinit { stop() }

    public func stop() {
        process.stop()
    }

    private static func readDisplayNumber(_ fd: Int32, _ process: ChildProcess, timeout: Duration) throws -> Int {
        let deadline = ContinuousClock.now + timeout
        var text = ""
        while !text.contains("\n") {
            let left = millisecondsLeft(until: deadline)
            guard left > 0, waitReadable(fd, milliseconds: left) else {
                throw HarnessError("Xvfb did not report a display number within \(timeout)\n\(process.logTail)")
            }
            var buffer = [UInt8](repeating: 0, count: 64)
            let n = read(fd, &buffer, buffer.count)
            guard n > 0 else {
                try process.checkRunning(while: "starting")
                throw HarnessError("Xvfb closed its -displayfd pipe without a display number\n\(process.logTail)")
            }
            text += String(decoding: buffer[..<n], as: UTF8.self)
        }
        guard let number = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw HarnessError("Xvfb reported \"\(text)\" instead of a display number")
        }
        return number
    }
}
