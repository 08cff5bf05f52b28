internal import Glibc
public import SystemPackage

/// A thread that waits for presses on a descriptor of their own (X11's input connection) and
/// handles them with the daemon's state lock held (`StateLock`), then wakes the loop when
/// `handle` says they left it something to do (a settle after a dismissal). It runs no other
/// code: between presses it sleeps, so that the scheduler puts it on the CPU as soon as one
/// comes, however busy the loop is with other windows.
public final class PressThread: PollSource, @unchecked Sendable {
    private let descriptor: FileDescriptor
    private let lock: StateLock
    private let handle: () -> Bool
    private let wake: (read: FileDescriptor, write: FileDescriptor)
    /// The thread's, for what only the kernel's id of it can set (its time slices).
    public private(set) var id = ThreadID.calling

    /// Starts the thread, or says why it cannot be. `handle` returns whether to wake the loop.
    public static func start(waitingOn descriptor: FileDescriptor, lock: StateLock,
                             handle: @escaping () -> Bool) -> Result<PressThread, Errno> {
        let wake: (readEnd: FileDescriptor, writeEnd: FileDescriptor)
        do {
            wake = try FileDescriptor.pipe(options: [.closeOnExec, .nonBlocking])
        } catch {
            return .failure(error)
        }
        let thread = PressThread(descriptor: descriptor, lock: lock, handle: handle, wake: (wake.readEnd, wake.writeEnd))
        switch DetachedThread.start(named: "presses", thread.run) {
        case .success(let id):
            thread.id = id
            return .success(thread)
        case .failure(let failure):
            try? wake.readEnd.close()
            try? wake.writeEnd.close()
            return .failure(failure)
        }
    }

    private init(descriptor: FileDescriptor, lock: StateLock, handle: @escaping () -> Bool,
                 wake: (read: FileDescriptor, write: FileDescriptor)) {
        self.descriptor = descriptor
        self.lock = lock
        self.handle = handle
        self.wake = wake
    }

    /// Until the connection breaks: then once more, for the loop to find it broken.
    private func run() {
        var entry = pollfd(fd: descriptor.rawValue, events: Int16(POLLIN), revents: 0)
        var broken = false
        while !broken {
            guard poll(&entry, 1, -1) > 0 else { continue }
            broken = entry.revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0
            lock.lockForPress()
            let wakeLoop = handle() || broken
            lock.unlock()
            guard wakeLoop else { continue }
            var byte: UInt8 = 1
            _ = write(wake.write.rawValue, &byte, 1)
        }
    }

    // MARK: - The loop's side: woken after each press handled

    public var pollDescriptor: FileDescriptor { wake.read }

    public func pollReturned(_ readiness: Readiness) {
        guard readiness.canRead else { return }
        var bytes: UInt64 = 0
        while read(wake.read.rawValue, &bytes, 8) > 0 {}
    }
}
