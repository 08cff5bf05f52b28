internal import ClickawaySystem

/// At most `perSecond` records of a kind a second. A burst of thousands of popup windows would
/// otherwise write two records each, and the journal, once its rate limit is reached (10,000
/// records in 30 s by default), drops the daemon's other records too. What is left out is
/// counted and said with the next record let through.
struct LogPace {
    let perSecond: Int
    private let clock: () -> Int64
    private var secondStarted: Int64?
    private var inThisSecond = 0
    private var skipped = 0

    /// `clock`: milliseconds, `MonotonicClock`'s unless a test gives its own.
    init(perSecond: Int, clock: @escaping () -> Int64 = MonotonicClock.milliseconds) {
        self.perSecond = perSecond
        self.clock = clock
    }

    /// Nil: leave this record out. Else how many were left out before it.
    mutating func next() -> Int? {
        let now = clock()
        if secondStarted.map({ now - $0 >= 1000 }) ?? true { (secondStarted, inThisSecond) = (now, 0) }
        guard inThisSecond < perSecond else {
            skipped += 1
            return nil
        }
        inThisSecond += 1
        defer { skipped = 0 }
        return skipped
    }
}
