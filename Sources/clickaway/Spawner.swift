import ClickawayControl
import Glibc
import Logging

/// Runs dismiss commands: posix_spawn without a shell, each in its own process group,
/// stdin from /dev/null, no descriptor but stdout/stderr inherited (everything else the
/// daemon opens is close-on-exec). Children are reaped on SIGCHLD without blocking;
/// a command still running after `slowAfterMs` is logged once and left alone.
final class Spawner {
    private struct Child {
        var argv0: String
        var popup: String
        /// The popup's window, when it has one: a failed command leaves it open.
        var window: UInt32?
        var startedAt: Int64
        var reportedSlow = false
    }

    private var children: [pid_t: Child] = [:]
    private let logger: Logger
    static let slowAfterMs: Int64 = 5000

    init(logger: Logger) { self.logger = logger }

    var running: Int { children.count }

    /// Starts a command; false when it could not be started (logged).
    @discardableResult
    func spawn(_ argv: [String], environment extra: [String: String], popup: String, window: UInt32?, now: Int64) -> Bool {
        var env = processEnvironment()
        // systemd's notification variables are the daemon's own, not its children's.
        for key in ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"] { env[key] = nil }
        for (k, v) in extra { env[k] = v }
        let envStrings = env.map { "\($0.key)=\($0.value)" }

        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        posix_spawnattr_setpgroup(&attr, 0)
        // The daemon blocks nothing and ignores nothing the child should see differently.
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for s in [SIGHUP, SIGINT, SIGTERM, SIGCHLD, SIGPIPE] { sigaddset(&defaults, s) }
        posix_spawnattr_setsigdefault(&attr, &defaults)
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attr, &empty)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)

        var pid: pid_t = 0
        let result = withCStrings(argv) { cArgv in
            withCStrings(envStrings) { cEnv in
                posix_spawnp(&pid, argv[0], &actions, &attr, cArgv, cEnv)
            }
        }
        guard result == 0 else {
            logger.error("cannot run dismiss command", metadata: [
                "popup": "\(popup)", "command": "\(argv[0])", "error": "\(String(cString: strerror(result)))",
            ])
            return false
        }
        children[pid] = Child(argv0: argv[0], popup: popup, window: window, startedAt: now)
        logger.debug("dismiss command started", metadata: ["popup": "\(popup)", "pid": "\(pid)", "command": "\(argv[0])"])
        return true
    }

    /// Collects every child that has exited; never blocks. Returns the windows whose
    /// dismiss command failed.
    @discardableResult
    func reap() -> [UInt32] {
        var failed: [UInt32] = []
        while true {
            var status: Int32 = 0
            let pid = waitpid(-1, &status, WNOHANG)
            guard pid > 0 else { return failed }
            guard let child = children.removeValue(forKey: pid) else { continue }
            let exited = status & 0x7f == 0
            let code = (status >> 8) & 0xff
            if exited && code == 0 {
                logger.debug("dismiss command finished", metadata: ["popup": "\(child.popup)", "pid": "\(pid)"])
                continue
            }
            if let window = child.window { failed.append(window) }
            if exited {
                logger.warning("dismiss command failed", metadata: [
                    "popup": "\(child.popup)", "command": "\(child.argv0)", "exit": "\(code)",
                ])
            } else {
                logger.warning("dismiss command killed by a signal", metadata: [
                    "popup": "\(child.popup)", "command": "\(child.argv0)", "signal": "\(status & 0x7f)",
                ])
            }
        }
    }

    /// Logs commands that have been running for long; returns when to look again (ms), or nil.
    func checkSlow(now: Int64) -> Int64? {
        var next: Int64?
        for (pid, var child) in children where !child.reportedSlow {
            let due = child.startedAt + Self.slowAfterMs
            if now >= due {
                logger.warning("dismiss command still running; the daemon does not wait for it", metadata: [
                    "popup": "\(child.popup)", "command": "\(child.argv0)", "pid": "\(pid)",
                ])
                child.reportedSlow = true
                children[pid] = child
            } else {
                next = min(next ?? due, due)
            }
        }
        return next
    }
}

private func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R) -> R {
    var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
    pointers.append(nil)
    defer { for p in pointers { free(p) } }
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}
