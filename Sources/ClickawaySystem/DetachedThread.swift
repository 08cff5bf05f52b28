internal import Glibc
public import SystemPackage

/// A thread of the daemon's own that runs `body` once and is never joined. It starts with
/// every signal blocked: signals stay with the loop's thread, which handles them.
public enum DetachedThread {
    /// Starts it; nil, or why it could not be started.
    public static func start(_ body: @escaping () -> Void) -> Errno? {
        var all = sigset_t(), previous = sigset_t()
        sigfillset(&all)
        pthread_sigmask(SIG_SETMASK, &all, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        var id = pthread_t()
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        let result = pthread_create(&id, nil, { context in
            Unmanaged<Body>.fromOpaque(context!).takeRetainedValue().run()
            return nil
        }, context)
        guard result == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            return Errno(rawValue: result)
        }
        pthread_detach(id)
        return nil
    }

    private final class Body: @unchecked Sendable {
        let run: () -> Void
        init(_ run: @escaping () -> Void) { self.run = run }
    }
}
