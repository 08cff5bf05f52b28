internal import CLinux
internal import Glibc
public import SystemPackage

/// Something the loop waits on: a descriptor, and the hooks around each sleep. Registered
/// with `PollLoop.add(_:)`; simple owners use `PollLoop.watch(_:reading:writing:_:)` instead.
public protocol PollSource: AnyObject {
    /// The descriptor to wait on: read once, when the source is added.
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

/// One epoll(7) loop. Each owner registers its descriptor with what to do when it is ready,
/// and its deadlines with what to do when they come; the loop sleeps until the first of
/// them, and nobody addresses another's slot. epoll, not poll(2): poll sets up and tears down
/// a wait on every descriptor at every sleep, and on the click's CPU that cost each click
/// 1 to 2.5 µs a descriptor (BENCHMARKS.md, the daemon's part of an inside click); epoll is
/// told only when what a descriptor waits for changes.
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
        /// The descriptor of a watch that only ever waits to read (`watch` without `reading`
        /// or `writing`): nothing to ask it before a wait, nothing to tell it when not ready.
        let plainWatch: FileDescriptor?
        /// The source's descriptor, read once: it may not change while registered.
        let descriptor: Int32
    }

    private struct Timer {
        let id: Int
        let timer: LoopTimer
        let fire: (Int64) -> Void
    }

    // Read before every wait. No runtime exclusivity check (it would cost more than the
    // read): every access is a statement of this class that calls out to no other code,
    // and sources and timers run on copies. bench/callgrind, inside click: a click without
    // it, 69 instructions more for `entries`, 70 for `timers` (BENCHMARKS.md, the daemon's
    // part of an inside click).
    @exclusivity(unchecked) private var entries: [Entry] = []
    @exclusivity(unchecked) private var timers: [Timer] = []
    private var nextID = 0
    /// Counts removals: a source removed by a handler during `wait()` hears nothing more.
    private var removals = 0
    private let epoll: FileDescriptor
    /// What each entry waits for (epoll's readable and writable bits), by entry and in the
    /// same order: kept apart from `entries`, which every wait copies, so that a change is
    /// no copy of them. No runtime exclusivity check, as for `entries`: bench/callgrind, inside
    /// click: 139 instructions a click without it (BENCHMARKS.md, the daemon's part of an
    /// inside click).
    @exclusivity(unchecked) private var wanted: [(id: Int, events: UInt32)] = []
    /// What epoll waits for on each descriptor: the union of its entries' wishes.
    private var interest: [Int32: UInt32] = [:]
    /// Entries whose descriptor epoll refused: each hears an error once, at the next wait.
    private var refused: [Int] = []
    /// The earliest deadline when the loop last went to sleep: until it comes, no timer is
    /// due, and `runDueDeadlines()` reads none of them. A deadline set since then that is due
    /// already makes the next wait return at once, and fires after it. `.min` (before the
    /// first wait, or once a timer is added): unknown, every timer is read.
    private var earliestAtLastWait: Deadline? = Deadline(milliseconds: .min)

    public init() throws(Errno) {
        let fd = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard fd >= 0 else { throw Errno(rawValue: errno) }
        epoll = FileDescriptor(rawValue: fd)
    }

    deinit { try? epoll.close() }

    /// Adds a source; its hooks run in the order sources were added.
    @discardableResult
    public func add(_ source: any PollSource) -> Registration {
        add(source, plainWatch: nil)
    }

    private func add(_ source: any PollSource, plainWatch: FileDescriptor?) -> Registration {
        nextID += 1
        let descriptor = (plainWatch ?? source.pollDescriptor).rawValue
        entries.append(Entry(id: nextID, source: source, plainWatch: plainWatch, descriptor: descriptor))
        wanted.append((nextID, plainWatch != nil ? UInt32(EPOLLIN.rawValue) : 0))
        updateInterest(descriptor)
        return Registration(id: nextID)
    }

    /// Tells epoll what `descriptor` waits for now: the union of its entries' wishes (epoll
    /// takes a descriptor once). A descriptor it refuses makes its entries hear an error.
    private func updateInterest(_ descriptor: Int32) {
        var events: UInt32?
        for i in entries.indices where entries[i].descriptor == descriptor { events = (events ?? 0) | wanted[i].events }
        guard let events else {
            // Its last entry went. The descriptor may be closed already (nothing left to undo).
            if interest.removeValue(forKey: descriptor) != nil { _ = epoll_ctl(epoll.rawValue, EPOLL_CTL_DEL, descriptor, nil) }
            return
        }
        guard interest[descriptor] != events else { return }
        var event = epoll_event()
        event.events = events
        event.data.fd = descriptor
        var result = epoll_ctl(epoll.rawValue, interest[descriptor] == nil ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, descriptor, &event)
        if result != 0 && errno == ENOENT {
            // Closed and opened again under the same number without being removed: epoll
            // forgot the old one.
            result = epoll_ctl(epoll.rawValue, EPOLL_CTL_ADD, descriptor, &event)
        }
        guard result == 0 else {
            interest[descriptor] = nil
            for entry in entries where entry.descriptor == descriptor && !refused.contains(entry.id) { refused.append(entry.id) }
            return
        }
        interest[descriptor] = events
    }

    /// Watches `descriptor`: `handler` runs after each wait in which it became ready.
    /// `reading` and `writing` say, before each wait, whether to wait for it to be readable
    /// (else only a hang-up or an error wakes it) and writable; without them, readable only.
    @discardableResult
    public func watch(_ descriptor: FileDescriptor, reading: (() -> Bool)? = nil, writing: (() -> Bool)? = nil,
                      _ handler: @escaping (Readiness) -> Void) -> Registration {
        add(Watch(descriptor: descriptor, reading: reading, writing: writing, handler: handler),
            plainWatch: reading == nil && writing == nil ? descriptor : nil)
    }

    /// Calls `fire` with the time (MonotonicClock milliseconds) from the first
    /// `runDueDeadlines()` at or after `timer`'s deadline, which is read before every wait.
    @discardableResult
    public func schedule(_ timer: LoopTimer, _ fire: @escaping (Int64) -> Void) -> Registration {
        nextID += 1
        timers.append(Timer(id: nextID, timer: timer, fire: fire))
        earliestAtLastWait = Deadline(milliseconds: .min)
        return Registration(id: nextID)
    }

    /// Stops watching or scheduling; safe from inside a handler.
    public func remove(_ registration: Registration) {
        removals &+= 1
        if let i = entries.firstIndex(where: { $0.id == registration.id }) {
            let descriptor = entries[i].descriptor
            entries.remove(at: i)
            wanted.remove(at: i)
            updateInterest(descriptor)
        }
        refused.removeAll { $0 == registration.id }
        timers.removeAll { $0.id == registration.id }
    }

    private func isRegistered(_ id: Int) -> Bool { entries.contains { $0.id == id } }

    /// The earliest deadline registered, if any.
    public var nextDeadline: Deadline? {
        var earliest: Deadline?
        // By index: only the timer is read, not the entry copied (a retain of its closure).
        for i in timers.indices {
            if let due = timers[i].timer.deadline, earliest.map({ due < $0 }) ?? true { earliest = due }
        }
        return earliest
    }

    /// Held by the loop's thread but while it sleeps, when a press thread shares its state
    /// (`PressThread`).
    public var stateLock: StateLock?

    /// The least time between two wakeups, in microseconds (0: none): a wait that comes
    /// sooner after the last one first sleeps the rest, without the state lock. Only for a
    /// loop that reads no presses (a press thread does); changed with the state lock held.
    public var wakeSpacing: Int64 = 0
    /// When the last wait ended (MonotonicClock microseconds), while the waits are spaced.
    private var lastWake: Int64 = 0

    /// Sleeps until `spacing` has passed since the last wakeup; returns whether it slept.
    private func keepWakesApart(_ spacing: Int64) -> Bool {
        let rest = lastWake + spacing - MonotonicClock.microseconds()
        guard rest > 0 else { return false }
        var duration = timespec(tv_sec: Int(rest / 1_000_000), tv_nsec: Int(rest % 1_000_000) * 1000)
        // A signal ends it early, and the wait after it returns at once (its self-pipe).
        nanosleep(&duration, nil)
        return true
    }

    /// Sleeps until a descriptor is ready or the next deadline comes (without one, for as
    /// long as it takes; not at all when a source has work waiting), then lets every source
    /// see what its descriptor is ready for. A signal ends the wait early.
    public func wait() {
        let sources = entries
        var busy = !refused.isEmpty
        // By index: a plain watch's source is not even copied (retained).
        for i in sources.indices where sources[i].plainWatch == nil {
            let source = sources[i].source
            if source.prepareToSleep() { busy = true }
            let events = (source.wantsToRead ? UInt32(EPOLLIN.rawValue) : 0) | (source.wantsToWrite ? UInt32(EPOLLOUT.rawValue) : 0)
            // A hook that removed a registration moved the indices: asked again next time.
            if i < wanted.count, wanted[i].id == sources[i].id, events != wanted[i].events {
                wanted[i].events = events
                updateInterest(sources[i].descriptor)
            }
        }
        let refusedNow = refused
        refused.removeAll()
        // On the stack: the loop allocates nothing per wait.
        withUnsafeTemporaryAllocation(of: epoll_event.self, capacity: max(sources.count, 1)) { ready in
            earliestAtLastWait = nextDeadline
            var timeout = busy ? 0 : Deadline.pollTimeout(earliestAtLastWait)
            // Before the lock goes: a press thread may end registrations, or change the
            // spacing, while the loop sleeps.
            let removalsBefore = removals
            let spacing = wakeSpacing
            stateLock?.unlock()
            if timeout != 0 && spacing > 0 && keepWakesApart(spacing) {
                timeout = Deadline.pollTimeout(earliestAtLastWait)
            }
            let count = max(0, Int(epoll_wait(epoll.rawValue, ready.baseAddress, Int32(ready.count), timeout)))
            if spacing > 0 { lastWake = MonotonicClock.microseconds() }
            stateLock?.lock()
            for i in sources.indices where removals == removalsBefore || isRegistered(sources[i].id) {
                var readiness: Readiness = []
                for j in 0..<count where ready[j].data.fd == sources[i].descriptor {
                    // Of what the descriptor is ready for, what this entry waits for: another
                    // entry of the same descriptor may wait for more.
                    let wants = wanted.first { $0.id == sources[i].id }?.events ?? 0
                    readiness = Readiness(rawValue: Int16(truncatingIfNeeded: ready[j].events & (wants | UInt32(EPOLLERR.rawValue | EPOLLHUP.rawValue))))
                }
                if !refusedNow.isEmpty && refusedNow.contains(sources[i].id) { readiness.insert(.error) }
                if sources[i].plainWatch != nil && readiness.isEmpty { continue }
                sources[i].source.pollReturned(readiness)
            }
        }
    }

    /// Fires every deadline that has come.
    public func runDueDeadlines() {
        guard let earliest = earliestAtLastWait else { return }
        let now = MonotonicClock.milliseconds()
        guard earliest.hasPassed(now: now) else { return }
        let removalsBefore = removals
        for timer in timers {
            guard removals == removalsBefore || timers.contains(where: { $0.id == timer.id }),
                  let due = timer.timer.deadline, due.hasPassed(now: now) else { continue }
            timer.fire(now)
        }
    }
}

/// A deadline that its owner keeps and the loop reads before every wait (`PollLoop.schedule`),
/// rather than a question the loop asks each timer before each wait: asking eight of them
/// cost every click about a thousand instructions. The owner sets it whenever its next
/// deadline moves, nil when it has none; one earlier than the owner's next costs a wakeup,
/// in which `fire` runs and sets it again.
public final class LoopTimer {
    public var deadline: Deadline? {
        get { stored }
        set { stored = newValue }
    }

    // Read before every wait, so with no runtime exclusivity check: only ever loaded or stored
    // whole. Behind accessors: a stored property's check is not waived in other modules,
    // where it was hoisted to the top of the loops that set it, and every click paid for it.
    // bench/callgrind, inside click: 9 instructions a click without it (BENCHMARKS.md, the
    // daemon's part of an inside click).
    @exclusivity(unchecked) private var stored: Deadline?

    public init(_ deadline: Deadline? = nil) { stored = deadline }
}

/// A descriptor and a closure: `PollLoop.watch`.
private final class Watch: PollSource {
    let pollDescriptor: FileDescriptor
    /// nil: always (reading), never (writing); asked before every wait otherwise.
    let reading: (() -> Bool)?
    let writing: (() -> Bool)?
    let handler: (Readiness) -> Void

    init(descriptor: FileDescriptor, reading: (() -> Bool)?, writing: (() -> Bool)?, handler: @escaping (Readiness) -> Void) {
        pollDescriptor = descriptor
        self.reading = reading
        self.writing = writing
        self.handler = handler
    }

    var wantsToRead: Bool { reading?() ?? true }
    var wantsToWrite: Bool { writing?() ?? false }

    func pollReturned(_ readiness: Readiness) {
        if !readiness.isEmpty { handler(readiness) }
    }
}
