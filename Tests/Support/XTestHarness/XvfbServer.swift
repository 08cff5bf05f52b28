import ClickawaySystem
import Foundation
import ProcessSupport
import SystemPackage

/// A private Xvfb for one test: it picks a free display itself (-displayfd) and is gone
/// after `stop()` or deinit.
public final class XvfbServer {
    /// The display name, e.g. ":3".
    public let display: String
    private let process: ChildProcess

    /// `arguments`: more of Xvfb's options, e.g. `-extension XFIXES` for a server without it.
    public init(width: Int = 1280, height: Int = 720, arguments: [String] = [], timeout: Duration = .seconds(10)) throws {
        // -displayfd 1: Xvfb writes the display number it chose to its stdout once it
        // accepts connections.
        let (readEnd, writeEnd) = try FileDescriptor.pipe(options: .closeOnExec)
        defer { try? readEnd.close() }
        do {
            defer { try? writeEnd.close() }
            process = try ChildProcess(
                ["Xvfb", "-displayfd", "1", "-screen", "0", "\(width)x\(height)x24", "-nolisten", "tcp"] + arguments,
                stdout: writeEnd)
        }
        display = ":\(try Self.readDisplayNumber(readEnd, process, timeout: timeout))"
    }

    deinit { stop() }

    public func stop() {
        process.stop()
    }

    private static func readDisplayNumber(_ fd: FileDescriptor, _ process: ChildProcess, timeout: Duration) throws -> Int {
        let deadline = Deadline(after: timeout)
        var bytes: [UInt8] = []
        while !bytes.contains(0x0A) {
            guard (try? fd.wait(until: deadline))?.canRead == true else {
                throw HarnessError("Xvfb did not report a display number within \(timeout)\n\(process.logTail)")
            }
            guard let n = try? fd.readAvailable(appendingTo: &bytes, chunk: 64), n > 0 else {
                try process.checkRunning(while: "starting")
                throw HarnessError("Xvfb closed its -displayfd pipe without a display number\n\(process.logTail)")
            }
        }
        let text = String(decoding: bytes, as: UTF8.self)
        guard let number = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw HarnessError("Xvfb reported \"\(text)\" instead of a display number")
        }
        return number
    }
}
