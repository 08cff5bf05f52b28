import ClickawaySystem
import Foundation
import SystemPackage

/// A helper program (Xvfb, openbox) run for a test, its stderr kept in a temporary file for
/// failure messages. `stop()`, also run from deinit, ends it with SIGTERM, then SIGKILL.
///
/// If the test process dies without stopping it (a crash, a CI timeout's SIGKILL), a
/// watchdog ends it: a `sh` reading a pipe whose only write end is held by the test
/// process. The kernel closes that end when the process dies, the read returns, and the
/// watchdog sends SIGTERM.
///
/// Spawned with `Spawn` (the daemon's own) rather than Foundation's Process because the
/// children must start with every signal unblocked and at its default action (test threads
/// block SIGTERM, and Process passes that mask on, so the helper would ignore the polite way
/// to stop it), and with no descriptor of the test process but the three standard ones.
public final class ChildProcess {
    public let name: String
    public let pid: pid_t
    private let watchdog: pid_t
    private var lifeline: FileDescriptor
    /// Where the program's stderr goes.
    public let logPath: String
    private var stopped = false

    /// Runs `arguments[0]`, found on PATH. `stdout` is the descriptor to give the program as
    /// its standard output (default /dev/null); `environment` replaces the test's environment.
    public init(_ arguments: [String], environment: [String: String]? = nil, stdout: FileDescriptor? = nil) throws {
        // The program's name, not its path: it becomes part of the log file's name.
        name = arguments[0].split(separator: "/").last.map(String.init) ?? arguments[0]
        logPath = FileManager.default.temporaryDirectory
            .appendingPathComponent("clickaway-\(name)-\(getpid())-\(UUID().uuidString).log").path
        let environment = environment ?? ProcessInfo.processInfo.environment

        let (readEnd, writeEnd) = try FileDescriptor.pipe(options: .closeOnExec)
        defer { try? readEnd.close() }
        lifeline = writeEnd
        do {
            pid = try Spawn.start(arguments, Spawn.Options(
                environment: environment, stdout: stdout.map(Spawn.Stream.descriptor) ?? .null, stderr: .file(logPath)))
        } catch {
            try? writeEnd.close()
            throw HarnessError("\(error)")
        }
        do {
            watchdog = try Spawn.start(
                ["sh", "-c", "read _; kill -TERM \"$1\" 2>/dev/null", "clickaway-watchdog", String(pid)],
                Spawn.Options(environment: ["PATH": "/usr/bin:/bin"], stdin: .descriptor(readEnd), stdout: .null, stderr: .null))
        } catch {
            kill(pid, SIGKILL)
            _ = ProcessExit.reap(pid, blocking: true)
            try? writeEnd.close()
            throw HarnessError("\(error)")
        }
    }

    deinit { stop() }

    /// Whether the program still runs. Does not reap it: until `stop()` the pid stays ours,
    /// so the watchdog can never signal a stranger that inherited the number.
    public var isRunning: Bool { exit == nil }

    /// How the program ended, once it has (not reaped, as for `isRunning`); nil while it runs.
    /// A program whose status cannot be read any more (someone else reaped it) counts as ended.
    public var exit: String? {
        switch peekExit() {
        case .failure(let error): return "its status could not be read: \(error)"
        case .success(nil): return nil
        case .success(.exited(let code)?): return "exit status \(code)"
        case .success(.killed(let signal)?): return "signal \(signal)"
        }
    }

    /// The program's exit without reaping it (WNOWAIT), nil while it runs.
    private func peekExit() -> Result<ProcessExit?, Errno> {
        var info = siginfo_t()
        var result: Int32
        repeat { result = waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) } while result != 0 && errno == EINTR
        guard result == 0 else { return .failure(Errno(rawValue: errno)) }
        guard info._sifields._sigchld.si_pid != 0 else { return .success(nil) }
        let status = info._sifields._sigchld.si_status
        return .success(info.si_code == CLD_EXITED ? .exited(code: status) : .killed(signal: status))
    }

    /// The end of what the program wrote to stderr, for failure messages.
    public var logTail: String {
        let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        let tail = text.split(separator: "\n").suffix(15).joined(separator: "\n")
        return tail.isEmpty ? "(\(name) wrote nothing to stderr)" : "\(name) stderr:\n\(tail)"
    }

    /// Throws if the program has exited, with its stderr.
    public func checkRunning(while doing: String) throws {
        guard let exit else { return }
        throw HarnessError("\(name) (pid \(pid)) exited while \(doing) (\(exit))\n\(logTail)")
    }

    /// Sends a signal and waits (bounded) for the program to exit; returns its wait status,
    /// as the shell reports it (128 + the signal for one that killed it), or nil when it did
    /// not exit within `limit`.
    public func signalAndWait(_ signal: Int32, within limit: Duration = .seconds(5)) -> Int32? {
        kill(pid, signal)
        return waitForExit(within: limit)
    }

    /// Waits (bounded) for the program to exit by itself; its status as the shell reports
    /// it, or nil when it still runs after `limit`. Does not reap it (`stop()` does).
    public func waitForExit(within limit: Duration) -> Int32? {
        let deadline = Deadline(after: limit)
        while !deadline.hasPassed() {
            if case .success(let exit?) = peekExit() { return exit.shellStatus }
            usleep(2_000)
        }
        return nil
    }

    public func stop() {
        guard !stopped else { return }
        stopped = true
        // The watchdog first: closing the lifeline makes it send SIGTERM, and it must be gone
        // before the program is reaped and its pid can be reused.
        try? lifeline.close()
        Self.reap(watchdog, within: .seconds(2))
        kill(pid, SIGTERM)
        Self.reap(pid, within: .seconds(5))
        unlink(logPath)
    }

    /// Waits for `pid` to exit, SIGKILLing it when `limit` passes.
    private static func reap(_ pid: pid_t, within limit: Duration) {
        let deadline = Deadline(after: limit)
        while ProcessExit.reap(pid, blocking: false) == nil {
            guard !deadline.hasPassed() else {
                kill(pid, SIGKILL)
                _ = ProcessExit.reap(pid, blocking: true)
                return
            }
            usleep(2_000)
        }
    }
}
