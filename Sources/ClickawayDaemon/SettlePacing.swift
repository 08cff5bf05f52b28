internal import ClickawaySystem

/// How soon the daemon settles again after windows changed while they keep changing. A
/// settle costs in proportion to the open popups (about half a millisecond with 2,000 open):
/// settled after every batch of events read, a burst of popup windows kept the daemon
/// settling a third of its time. After a settle that took `d`, changes of windows wait
/// `spacing × d` (4 ms after one of half a millisecond), so that settling takes at most a
/// ninth of the loop; after one shorter than `immediateMicroseconds`, they never wait. A
/// click, a key or a request settles at once: each is decided on the state as it is.
struct SettlePacing {
    let immediateMicroseconds: Int64
    let spacing: Int64

    init(immediateMicroseconds: Int64 = 100, spacing: Int64 = 8) {
        self.immediateMicroseconds = immediateMicroseconds
        self.spacing = spacing
    }

    /// Microseconds on `MonotonicClock` from which the next settle for windows may run.
    private var allowedFrom: Int64 = 0

    mutating func settled(tookMicroseconds took: Int64, now: Int64) {
        allowedFrom = took < immediateMicroseconds ? 0 : now + spacing * took
    }

    func allows(now: Int64) -> Bool { now >= allowedFrom }

    /// When the loop must wake to settle the changes that waited.
    var deadline: Deadline { Deadline(milliseconds: (allowedFrom + 999) / 1000) }
}
