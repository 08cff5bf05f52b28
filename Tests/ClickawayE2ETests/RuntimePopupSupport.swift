import ClickawayJSON
import ClickawaySystem
import Foundation
import ProcessSupport
import SystemPackage

/// `clickawayctl` (`wait`, `open --pid`) or a recipe's script running in the background, its
/// stdout kept in a file and its stderr in the process's log, its exit status read with a
/// bounded wait.
final class BackgroundCtl {
    let process: ChildProcess
    let arguments: [String]
    private let outputPath: String

    /// `clickawayctl ARGUMENTS`.
    convenience init(_ run: DaemonRun, _ arguments: [String]) throws {
        try self.init(run, command: [DaemonRun.buildDirectory.appendingPathComponent("clickawayctl").path] + arguments)
    }

    /// Any program, with the built `clickawayctl` first on its PATH.
    init(_ run: DaemonRun, command: [String], environment extra: [String: String] = [:]) throws {
        arguments = command
        outputPath = run.directory.appendingPathComponent("ctl-\(UUID().uuidString).out").path
        let fd = try FileDescriptor.open(outputPath, .writeOnly, options: [.create, .truncate, .closeOnExec],
                                        permissions: .ownerReadWrite)
        defer { try? fd.close() }
        var environment = run.environment.merging(extra) { $1 }
        environment["PATH"] = DaemonRun.buildDirectory.path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        process = try ChildProcess(command, environment: environment, stdout: fd)
    }

    deinit { process.stop() }

    var stdout: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }

    /// The exit status once it has exited by itself, at most `limit` from now.
    func exitStatus(within limit: Duration = .seconds(20)) throws -> Int32 {
        guard let status = process.waitForExit(within: limit) else {
            throw HarnessError("clickawayctl \(arguments.joined(separator: " ")) still runs after \(limit)\n\(process.logTail)")
        }
        return status
    }

    /// SIGINT or SIGTERM, then the exit status.
    func interrupt(_ signal: Int32) throws -> Int32 {
        guard let status = process.signalAndWait(signal, within: .seconds(10)) else {
            throw HarnessError("clickawayctl \(arguments.joined(separator: " ")) did not exit on signal \(signal)\n\(process.logTail)")
        }
        return status
    }

    var stderr: String { process.logTail }
}

/// A FIFO that a program started for a test reads before going on: a window that appears
/// exactly when the test says, never because a sleep ran out.
final class Gate {
    let path: String

    init(in directory: URL) throws {
        path = directory.appendingPathComponent("gate-\(UUID().uuidString)").path
        guard mkfifo(path, 0o600) == 0 else { throw HarnessError("mkfifo \(path): \(Errno(rawValue: errno))") }
    }

    deinit { unlink(path) }

    /// `sh -c` that waits for the gate and then becomes `program` (same pid).
    func command(then program: [String]) -> [String] {
        ["sh", "-c", "read _ < \"$0\"; exec \"$@\"", path] + program
    }

    /// Lets the waiting shell go on.
    func open() throws {
        // Non-blocking: with nobody reading (the shell gone) this fails instead of hanging.
        let fd = try FileDescriptor.open(path, .writeOnly, options: [.closeOnExec, .nonBlocking])
        defer { try? fd.close() }
        _ = try fd.writeAll("go\n".utf8)
    }
}

extension DaemonRun {

    /// The status's entry for an open popup.
    func openEntry(_ name: String) throws -> JSON? {
        try status()["open"]?.arrayValue?.first { $0["popup"]?.stringValue == name }
    }

    /// Popups waiting for a window (`--pid`), by name.
    func waitingPopups() throws -> [String] { try report().waiting.map(\.popup) }
}
