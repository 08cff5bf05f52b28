import Foundation

/// A helper program (Xvfb, openbox) run for a test, its stderr kept in a temporary file for
/// failure messages. Stopped with SIGTERM, then SIGKILL if it lingers; never left behind by
/// a test that fails, since `stop()` also runs from deinit.
final class ChildProcess {
    let name: String
    private let process = Process()
    private let logURL: URL

    /// Runs `arguments[0]` found on PATH. `stdout` receives the program's standard output.
    init(_ arguments: [String], environment: [String: String]? = nil, stdout: Pipe? = nil) throws {
        name = arguments[0]
        logURL = FileManager.default.temporaryDirectory
            .appendingPathComponent("clickaway-\(name)-\(getpid())-\(UUID().uuidString).log")
        guard FileManager.default.createFile(atPath: logURL.path, contents: nil),
              let log = try? FileHandle(forWritingTo: logURL)
        else { throw HarnessError("cannot create the log file \(logURL.path) for \(name)") }
        defer { try? log.close() }

        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = stdout ?? FileHandle.nullDevice
        process.standardError = log
        do {
            try process.run()
        } catch {
            try? FileManager.default.removeItem(at: logURL)
            throw HarnessError("cannot start \(arguments.joined(separator: " ")): \(error)")
        }
    }

    deinit { stop() }

    var isRunning: Bool { process.isRunning }

    /// The end of what the program wrote to stderr, for failure messages.
    var logTail: String {
        let text = (try? String(contentsOf: logURL, encoding: .utf8)) ?? ""
        let tail = text.split(separator: "\n").suffix(15).joined(separator: "\n")
        return tail.isEmpty ? "(\(name) wrote nothing to stderr)" : "\(name) stderr:\n\(tail)"
    }

    /// Throws if the program has exited, with its status and stderr.
    func checkRunning(while doing: String) throws {
        guard !process.isRunning else { return }
        throw HarnessError("\(name) exited with status \(process.terminationStatus) while \(doing)\n\(logTail)")
    }

    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            let deadline = ContinuousClock.now + .seconds(5)
            while process.isRunning && ContinuousClock.now < deadline {
                usleep(5_000)
            }
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
        }
        try? FileManager.default.removeItem(at: logURL)
    }
}
