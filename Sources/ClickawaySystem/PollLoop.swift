internal import Glibc
public import SystemPackage

/// Something the loop waits on: a descriptor, and the hooks around each sleep. Registered
/// with `PollLoop.add(_:)`; simple owners use `PollLoop.watch(_:writing:_:)` instead.
public protocol PollSource: AnyObject {
    /// The descriptor to wait on.
    var pollDescriptor: FileDescriptor { get }
    /// Whether to wait until it is readable (false: only a hang-up or an error wakes it).
    var wantsToRead: Bool { get }
    /// Whether to wait until it is writable too (output is queued).
    var wantsToWrite: Bool { get }
    /// Just before the loop sleeps. Returns true when work is already waiting (events a
    /// library has queued without the descriptor showing it): the loop then only looks.
    func prepareToSleep() -> Bool
    /// After every wait, in registration order, before any later source's: what the
    /// descriptor is ready for, empty when nothing.
    func pollReturned(_ readiness: Readiness)
}

extension PollSource {
    public var wantsToRead: Bool { true }
    public var wantsToWrite: Bool { false }
    public func prepareToSleep() -> Bool { false }
}

/// One poll(2) loop. Each owner registers its descriptor with what to do when it is ready,
/// and its deadlines with what to do when they come; the loop sleeps until the first of
/// them, and nobody addresses another's slot.
///
/// `wait()` sleeps and lets every source read what is ready; `runDueDeadlines()` is separate,
/// so that the owner of the loop decides what must be current before deadlines are judged.
public final class PollLoop {
    /// A registration, to remove it with `remove(_:)`.
    public struct Registration: Hashable, Sendable {
        fileprivate let id: Int
    }

    private struct Entry {
        let id: Int
        let source: any PollSource
    }

    private struct Timer {
        let id: Int
        let next: () -> Deadline?
        let fire: (Int64) -> Void
    }

    private var entries: [Entry] = []
    private var timers: [Timer] = []
    private var nextID = 0
    /// Reused between waits.
    private var descriptors: [pollfd] = []

    public init() {}

    /// Adds a source; its hooks run in the order sources were added.
    @discardableResult
    public func add(_ source: any PollSource) -> Registration {
        nextID += 1
        entries.append(Entry(id: nextID, source: source))
        return Registration(id: nextID)
    }

    /// Watches `descriptor`: `handler` runs after each wait in which it became ready.
    /// `reading` and `writing` say, before each wait, whether to wait for it to be readable
    /// (else only a hang-up or an error wakes it) and writable.
    @discardableResult
    public func watch(_ descriptor: FileDescriptor, reading: @escaping () -> Bool = { true }, writing: @escaping () -> Bool = { false },
                      _ handler: @escaping (Readiness) -> Void) -> Registration {
        add(Watch(descriptor: descriptor, reading: reading, writing: writing, handler: handler))
    }

    /// Calls `fire` with the time (MonotonicClock milliseconds) from the first
    /// `runDueDeadlines()` at or after `next()`; `next` is asked before every wait, nil: none.
    @discardableResult
    public func schedule(_ next: @escaping () -> Deadline?, _ fire: @escaping (Int64) -> Void) -> Registration {
        nextID += 1
        timers.append(Timer(id: nextID, next: next, fire: fire))
        return Registration(id: nextID)
    }

    /// Stops watching or scheduling; safe from inside a handler.
    public func remove(_ registration: Registration) {
        entries.removeAll { $0.id == registration.id }
        timers.removeAll { $0.id == registration.id }
    }

    /// The earliest deadline registered, if any.
    public var nextDeadline: Deadline? { timers.compactMap { $0.next() }.min() }

    /// Sleeps until a descriptor is ready or the next deadline comes (without one, for as
    /// long as it takes; not at all when a source has work waiting), then lets every source
    /// see what its descriptor is ready for. A signal ends the wait early.
    public func wait() {
        let sources = entries
        var busy = false
        for entry in sources where entry.source.prepareToSleep() { busy = true }
        descriptors.removeAll(keepingCapacity: true)
        for entry in sources {
            let events = (entry.source.wantsToRead ? Readiness.readable : []).union(entry.source.wantsToWrite ? .writable : [])
            descriptors.append(pollfd(fd: entry.source.pollDescriptor.rawValue, events: events.rawValue, revents: 0))
        }
        let timeout = busy ? 0 : Deadline.pollTimeout(nextDeadline)
        let ready = poll(&descriptors, nfds_t(descriptors.count), timeout)
        for (i, entry) in sources.enumerated() where entries.contains(where: { $0.id == entry.id }) {
            entry.source.pollReturned(ready > 0 ? Readiness(rawValue: descriptors[i].revents) : [])
        }
    }

    /// Fires every deadline that has come.
    public func runDueDeadlines() {
        let now = MonotonicClock.milliseconds()
        for timer in timers {
            guard timers.contains(where: { $0.id == timer.id }), let due = timer.next(), due.hasPassed(now: now) else { continue }
            timer.fire(now)
        }
    }
}

/// A descriptor and a closure: `PollLoop.watch`.
private final class Watch: PollSource {
    let pollDescriptor: FileDescriptor
    let reading: () -> Bool
    let writing: () -> Bool
    let handler: (Readiness) -> Void

    init(descriptor: FileDescriptor, reading: @escaping () -> Bool, writing: @escaping () -> Bool, handler: @escaping (Readiness) -> Void) {
        pollDescriptor = descriptor
        self.reading = reading
        self.writing = writing
        self.handler = handler
    }

    var wantsToRead: Bool { reading() }
    var wantsToWrite: Bool { writing() }

    func pollReturned(_ readiness: Readiness) {
        if !readiness.isEmpty { handler(readiness) }
    }
}
