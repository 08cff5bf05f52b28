internal import CLinux
public import Glibc
public import SystemPackage

/// Starts programs the one way this package does: posix_spawn, found on PATH, with exactly
/// the environment given, every signal at its default action and none blocked (a parent's
/// mask and ignored signals are not handed down), and no descriptor but the three standard
/// ones: whatever else the process holds, close-on-exec or not, stays with it.
public enum Spawn {
    /// What a child gets as one of its standard streams.
    public enum Stream: Sendable {
        /// The parent's own.
        case inherit
        case null
        /// A descriptor of the parent's, duplicated onto the stream.
        case descriptor(FileDescriptor)
        /// A file, created or truncated, mode 0600 (for stderr logs).
        case file(String)
    }

    public struct Options: Sendable {
        public var environment: [String: String]
        public var stdin: Stream
        public var stdout: Stream
        public var stderr: Stream
        /// A process group of its own: a signal to the parent's group does not reach it.
        public var ownProcessGroup: Bool
        /// The working directory, when not the parent's.
        public var directory: String?

        public init(environment: [String: String], stdin: Stream = .null, stdout: Stream = .inherit,
                    stderr: Stream = .inherit, ownProcessGroup: Bool = false, directory: String? = nil) {
            self.environment = environment
            self.stdin = stdin
            self.stdout = stdout
            self.stderr = stderr
            self.ownProcessGroup = ownProcessGroup
            self.directory = directory
        }
    }

    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let program: String
        public let errno: Errno
        public var description: String { "cannot run \(program): \(errno)" }
    }

    /// Starts `arguments[0]` (searched on PATH when it has no slash) and returns its pid.
    public static func start(_ arguments: [String], _ options: Options) throws(Failure) -> pid_t {
        precondition(!arguments.isEmpty, "a program to run")
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigdefault(&attributes, &all)
        var flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
        if options.ownProcessGroup {
            posix_spawnattr_setpgroup(&attributes, 0)
            flags |= POSIX_SPAWN_SETPGROUP
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (stream, fd, openFlags) in [(options.stdin, Int32(0), O_RDONLY), (options.stdout, 1, O_WRONLY), (options.stderr, 2, O_WRONLY)] {
            switch stream {
            case .inherit: break
            case .null: posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", openFlags, 0)
            case .descriptor(let source): posix_spawn_file_actions_adddup2(&actions, source.rawValue, fd)
            case .file(let path): posix_spawn_file_actions_addopen(&actions, fd, path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            }
        }
        // Nothing else: a descriptor another thread opened without close-on-exec (Foundation's
        // pipes and files) would otherwise live on in a long-lived child.
        clinux_spawn_close_from(&actions, 3)
        if let directory = options.directory { clinux_spawn_chdir(&actions, directory) }

        let argv = arguments.map { strdup($0) } + [nil]
        let envp = options.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, envp)
        guard result == 0 else { throw Failure(program: arguments[0], errno: Errno(rawValue: result)) }
        return pid
    }
}
