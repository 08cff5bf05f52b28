import ClickawayX11
import Foundation

/// A private Xvfb for one test: it picks a free display itself (-displayfd) and is gone
/// after `stop()` or deinit.
///
/// The server runs with `-terminate` and the harness keeps one connection open to it, so
/// even if the test process dies without cleaning up, that connection closes, the server
/// resets, and `-terminate` makes it exit instead of lingering.
public final class XvfbServer {
    /// The display name, e.g. ":3".
    public let display: String
    private let process: ChildProcess
    private var keeper: XConnection?

    public init(width: Int = 1280, height: Int = 720, timeout: Duration = .seconds(10)) throws {
        // -displayfd 1: Xvfb writes the display number it chose to its stdout once it
        // accepts connections.
        let output = Pipe()
        process = try ChildProcess(
            ["Xvfb", "-displayfd", "1", "-screen", "0", "\(width)x\(height)x24", "-nolisten", "tcp", "-terminate"],
            stdout: output)
        let number = try Self.readDisplayNumber(output.fileHandleForReading.fileDescriptor, process, timeout: timeout)
        display = ":\(number)"
        do {
            keeper = try XConnection(display: display)
        } catch {
            throw HarnessError("Xvfb announced display \(display) but connecting failed: \(error)\n\(process.logTail)")
        }
    }

    deinit { stop() }

    public func stop() {
        keeper = nil
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
