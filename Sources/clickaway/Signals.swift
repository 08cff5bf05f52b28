import Glibc

/// Signals only set a flag and wake the loop through a self-pipe (sxhkd's rule): the loop
/// acts on them between events, never inside a handler.
enum Signals {
    nonisolated(unsafe) static var pipe: (read: Int32, write: Int32) = (-1, -1)
    nonisolated(unsafe) static var reload: sig_atomic_t = 0
    nonisolated(unsafe) static var terminate: sig_atomic_t = 0
    nonisolated(unsafe) static var child: sig_atomic_t = 0

    static func install() {
        // A parent may hand down a blocked mask (Foundation's Process does): unblock all,
        // or SIGTERM would never arrive.
        var none = sigset_t()
        sigemptyset(&none)
        sigprocmask(SIG_SETMASK, &none, nil)
        var fds: [Int32] = [-1, -1]
        _ = Glibc.pipe(&fds)
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        pipe = (fds[0], fds[1])
        handle(SIGHUP) { _ in Signals.reload = 1; Signals.wake() }
        handle(SIGTERM) { _ in Signals.terminate = 1; Signals.wake() }
        handle(SIGINT) { _ in Signals.terminate = 1; Signals.wake() }
        handle(SIGCHLD) { _ in Signals.child = 1; Signals.wake() }
        signal(SIGPIPE, SIG_IGN)
    }

    private static func handle(_ signal: Int32, _ handler: @convention(c) (Int32) -> Void) {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = handler
        sigemptyset(&action.sa_mask)
        action.sa_flags = SA_RESTART
        sigaction(signal, &action, nil)
    }

    static func wake() {
        var byte: UInt8 = 1
        _ = write(pipe.write, &byte, 1)
    }

    static func drain() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(pipe.read, &buffer, buffer.count) > 0 {}
    }
}
