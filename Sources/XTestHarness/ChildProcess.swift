import Foundation

/// A helper program (Xvfb, openbox) run for a test, its stderr kept in a temporary file for
/// failure messages. `stop()`, also run from deinit, ends it with SIGTERM, then SIGKILL.
///
/// If the test process dies without stopping it (a crash, a CI timeout's SIGKILL), a
/// watchdog ends it: a `sh` reading a pipe whose only write end is held by the test
/// process. The kernel closes that end when the process dies, the read returns, and the
/// watchdog sends SIGTERM.
///
/// Spawned with posix_spawn rather than Foundation's Process because the children must start
/// with every signal unblocked and at its default action: test threads block SIGTERM, and
/// Process passes that mask on, so the helper would ignore the polite way to stop it.
public final class ChildProcess {
    public let name: String
    public let pid: pid_t
    private let watchdog: pid_t
    private var lifeline: Int32
    /// Where the program's stderr goes.
    public let logPath: String
    private var stopped = false

    /// Runs `arguments[0]`, found on PATH. `stdout` is the descriptor to give the program as
    /// its standard output (default /dev/null); `environment` replaces the test's environment.
    public init(_ arguments: [String], environment: [String: String]? = nil, stdout: Int32? = nil) throws {
        // The program's name, not its path: it becomes part of the log file's name.
        name = arguments[0].split(separator: "/").last.map(String.init) ?? arguments[0]
        logPath = FileManager.default.temporaryDirectory
            .appendingPathComponent("clickaway-\(name)-\(getpid())-\(UUID().uuidString).log").path
        let environment = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }

        let (readEnd, writeEnd) = try socketPair()
        defer { close(readEnd) }
        lifeline = writeEnd
        do {
            pid = try Self.spawn(arguments, environment: environment, stdin: nil, stdout: stdout, stderrPath: logPath)
        } catch {
            close(writeEnd)
            throw error
        }
        do {
            watchdog = try Self.spawn(
                ["sh", "-c", "read _; kill -TERM \"$1\" 2>/dev/null", "clickaway-watchdog", String(pid)],
                environment: ["PATH=/usr/bin:/bin"], stdin: readEnd, stdout: nil, stderrPath: nil)
        } catch {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            close(writeEnd)
            throw error
        }
    }

    deinit { stop() }

    /// Whether the program still runs. Does not reap it: until `stop()` the pid stays ours,
    /// so the watchdog can never signal a stranger that inherited the number.
    public var isRunning: Bool {
        var info = siginfo_t()
        return waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info._sifields._sigchld.si_pid == 0
    }

    /// The end of what the program wrote to stderr, for failure messages.
    public var logTail: String {
        let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        let tail = text.split(separator: "\n").suffix(15).joined(separator: "\n")
        return tail.isEmpty ? "(\(name) wrote nothing to stderr)" : "\(name) stderr:\n\(tail)"
    }

    /// Throws if the program has exited, with its stderr.
    public func checkRunning(while doing: String) throws {
        guard !isRunning else { return }
        throw HarnessError("\(name) exited while \(doing)\n\(logTail)")
    }

    /// Sends a signal and waits (bounded) for the program to exit; returns its wait status,
    /// or nil when it did not exit within `limit`.
    public func signalAndWait(_ signal: Int32, within limit: Duration = .seconds(5)) -> Int32? {
        kill(pid, signal)
        let deadline = ContinuousClock.now + limit
        var info = siginfo_t()
        while ContinuousClock.now < deadline {
            if waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0, info._sifields._sigchld.si_pid != 0 {
                return info.si_code == CLD_EXITED ? info._sifields._sigchld.si_status : 128 + info._sifields._sigchld.si_status
            }
            usleep(2_000)
        }
        return nil
    }

    public func stop() {
        guard !stopped else { return }
        stopped = true
        // The watchdog first: closing the lifeline makes it send SIGTERM, and it must be gone
        // before the program is reaped and its pid can be reused.
        close(lifeline)
        Self.reap(watchdog, within: .seconds(2))
        kill(pid, SIGTERM)
        Self.reap(pid, within: .seconds(5))
        unlink(logPath)
    }

    /// Waits for `pid` to exit, SIGKILLing it when `limit` passes.
    private static func reap(_ pid: pid_t, within limit: Duration) {
        let deadline = ContinuousClock.now + limit
        var status: Int32 = 0
        while waitpid(pid, &status, WNOHANG) == 0 {
            guard ContinuousClock.now < deadline else {
                kill(pid, SIGKILL)
                waitpid(pid, &status, 0)
                return
            }
            usleep(2_000)
        }
    }

    private static func spawn(
        _ arguments: [String], environment: [String], stdin: Int32?, stdout: Int32?, stderrPath: String?
    ) throws -> pid_t {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let stdin {
            posix_spawn_file_actions_adddup2(&actions, stdin, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        if let stdout {
            posix_spawn_file_actions_adddup2(&actions, stdout, 1)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        }
        posix_spawn_file_actions_addopen(&actions, 2, stderrPath ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        // Nothing else: a descriptor another test opened meanwhile without close-on-exec (a
        // Foundation Pipe) would stay open in a long-lived helper, and its reader would wait
        // for an end of file that never comes.
        _ = addCloseFrom(&actions, 3)

        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, envp)
        guard result == 0 else {
            throw HarnessError("cannot start \(arguments.joined(separator: " ")): \(String(cString: strerror(result)))")
        }
        return pid
    }
}

/// glibc's posix_spawn_file_actions_addclosefrom_np (2.34), which spawn.h declares only
/// under _GNU_SOURCE, out of Swift's sight.
private let addCloseFrom: @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32 = {
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else {
        fatalError("glibc 2.34 or later is needed: posix_spawn_file_actions_addclosefrom_np is missing")
    }
    return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
}()

/// A connected socket pair, close-on-exec from the start so that children spawned by tests
/// running in parallel cannot inherit either end (pipe2 is not visible from Swift's Glibc).
func socketPair() throws -> (Int32, Int32) {
    var fds: [Int32] = [-1, -1]
    guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
        throw HarnessError("cannot create a socket pair: \(String(cString: strerror(errno)))")
    }
    return (fds[0], fds[1])
}
