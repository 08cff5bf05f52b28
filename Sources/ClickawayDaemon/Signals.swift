internal import ClickawaySystem
internal import Glibc
internal import SystemPackage

/// Signals only set a flag and wake the loop through a self-pipe (sxhkd's rule): the loop
/// acts on them between events, never inside a handler.
enum Signals {
    nonisolated(unsafe) static var pipe: (read: FileDescriptor, write: FileDescriptor) = (FileDescriptor(rawValue: -1), FileDescriptor(rawValue: -1))
    nonisolated(unsafe) static var reload: sig_atomic_t = 0
    nonisolated(unsafe) static var terminate: sig_atomic_t = 0
    nonisolated(unsafe) static var child: sig_atomic_t = 0

    static func install() {
        // A parent may hand down a blocked mask (Foundation's Process does): unblock all,
        // or SIGTERM would never arrive.
        var none = sigset_t()
        sigemptyset(&none)
        sigprocmask(SIG_SETMASK, &none, nil)
        if let fds = try? FileDescriptor.pipe(options: [.closeOnExec, .nonBlocking]) { pipe = (fds.readEnd, fds.writeEnd) }
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

    /// Async-signal-safe: one write(2), errno kept for the code the signal interrupted.
    static func wake() {
        let saved = errno
        var byte: UInt8 = 1
        _ = write(pipe.write.rawValue, &byte, 1)
        errno = saved
    }

    static func drain() {
        var buffer: [UInt8] = []
        while let n = try? pipe.read.readAvailable(appendingTo: &buffer, chunk: 64), n > 0 { buffer.removeAll() }
    }
}
