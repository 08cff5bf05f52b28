import ClickawaySystem
import Foundation

/// A program run to its end: its exit status, and what it wrote to stdout and stderr.
public struct ProgramRun: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String

    /// Both streams, for failure messages.
    public var output: String { stdout + (stderr.isEmpty ? "" : "\n[stderr]\n" + stderr) }

    /// Runs `arguments[0]` with exactly `environment` (spawned as `Spawn` does: no
    /// descriptor of the test process but the standard ones), stdin /dev/null, in
    /// `directory` when given. Killed and reported after `limit`.
    public static func run(_ arguments: [String], environment: [String: String], directory: String? = nil,
                           limit: Duration = .seconds(300)) throws -> ProgramRun {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("clickaway-run-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let (outPath, errPath) = (scratch + "/stdout", scratch + "/stderr")
        let pid: pid_t
        do {
            pid = try Spawn.start(arguments, Spawn.Options(environment: environment, stdout: .file(outPath), stderr: .file(errPath),
                                                           directory: directory))
        } catch {
            throw HarnessError("\(error)")
        }
        let deadline = Deadline(after: limit)
        var exit = ProcessExit.reap(pid, blocking: false)
        while exit == nil {
            guard !deadline.hasPassed() else {
                kill(pid, SIGKILL)
                _ = ProcessExit.reap(pid, blocking: true)
                throw HarnessError("\(arguments.joined(separator: " ")) did not finish within \(limit)")
            }
            usleep(2_000)
            exit = ProcessExit.reap(pid, blocking: false)
        }
        return ProgramRun(status: exit!.shellStatus,
                          stdout: (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "",
                          stderr: (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "")
    }
}
