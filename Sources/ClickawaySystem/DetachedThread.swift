internal import CLinux
internal import Glibc
public import SystemPackage

/// A thread of the daemon's own that runs `body` once and is never joined. It starts with
/// every signal blocked: signals stay with the loop's thread, which handles them.
public enum DetachedThread {
    /// Starts it under `name` (as `top -H` shows it, up to 15 bytes); its id once it runs, or
    /// why it could not be started.
    public static func start(named name: String, _ body: @escaping () -> Void) -> Result<ThreadID, Errno> {
        var all = sigset_t(), previous = sigset_t()
        sigfillset(&all)
        pthread_sigmask(SIG_SETMASK, &all, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        let thread = Body(name: name, run: body)
        var id = pthread_t()
        let context = Unmanaged.passRetained(thread).toOpaque()
        let result = pthread_create(&id, nil, { context in
            Unmanaged<Body>.fromOpaque(context!).takeRetainedValue().start()
            return nil
        }, context)
        guard result == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            return .failure(Errno(rawValue: result))
        }
        pthread_detach(id)
        return .success(thread.awaitID())
    }

    private final class Body: @unchecked Sendable {
        let name: String
        let run: () -> Void
        /// Posted once `id` is set.
        private let started: UnsafeMutablePointer<sem_t>
        private var id = ThreadID.calling

        init(name: String, run: @escaping () -> Void) {
            self.name = name
            self.run = run
            started = .allocate(capacity: 1)
            sem_init(started, 0, 0)
        }

        deinit {
            sem_destroy(started)
            started.deallocate()
        }

        /// On the new thread.
        func start() {
            _ = clinux_name_calling_thread(name)
            id = .current
            sem_post(started)
            run()
        }

        /// On the starting thread: microseconds, the time the new thread takes to begin.
        func awaitID() -> ThreadID {
            while sem_wait(started) != 0 && errno == EINTR {}
            return id
        }
    }
}
