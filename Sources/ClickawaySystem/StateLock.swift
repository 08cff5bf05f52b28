internal import Glibc
internal import Synchronization

/// The daemon's state, shared by the loop's thread and a press thread (`PressThread`): the
/// loop holds it always, but while it sleeps (`PollLoop.wait`) and at the safe points where
/// it hands it over (`handOverIfAsked`). The press thread takes it to decide and answer a
/// press while the loop is busy with other work, on a thread that sleeps between presses and
/// so is put on the CPU as soon as one comes (BENCHMARKS.md, what those presses wait for).
public final class StateLock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// The press thread waits for the lock: the loop hands it over at its next safe point.
    private let asked = Atomic<Bool>(false)

    public init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// The loop's thread.
    public func lock() { pthread_mutex_lock(mutex) }
    public func unlock() { pthread_mutex_unlock(mutex) }

    /// The press thread: waits until the loop sleeps or reaches a safe point.
    func lockForPress() {
        asked.store(true, ordering: .sequentiallyConsistent)
        pthread_mutex_lock(mutex)
        asked.store(false, ordering: .sequentiallyConsistent)
    }

    /// The loop at a safe point: the press thread that asked goes first. A mutex is not fair:
    /// unlocked and locked again at once, the loop would keep it.
    public func handOverIfAsked() {
        guard asked.load(ordering: .relaxed) else { return }
        pthread_mutex_unlock(mutex)
        while asked.load(ordering: .sequentiallyConsistent) { sched_yield() }
        pthread_mutex_lock(mutex)
    }
}
