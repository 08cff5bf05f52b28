internal import ClickawaySystem
internal import ClickawayX11

/// The `sync`s asked of the X display (`clickawayctl sync`, `add --window`), oldest first,
/// none of them waited for: each is a round trip on the daemon's three connections (the
/// windows', the window reads' and the input's), after whose replies the events the server
/// sent before them are handled; then the windows being read are read to the end (a burst of
/// windows may keep them coming: at most `readsLimitMs`); then, once the daemon has settled
/// what it handled (the display is about to sleep: `startSecondRoundTrip`), a second round
/// trip on the windows' and the input's connections, after which the server has processed
/// what the daemon sent for those events. Replies are collected between events, as the
/// window reads' are.
struct X11Syncs {
    static let readsLimitMs: Int64 = 1000

    private enum Stage {
        /// Round trips whose replies are collected in turn, then the windows being read.
        case firstRoundTrips([RoundTrip])
        case reads(until: Int64)
        case secondRoundTrips([RoundTrip])
        case done(failure: String?)
    }

    private typealias RoundTrip = (connection: XConnection, reply: PendingReply<Void>)

    private var waiting: [(id: Int, stage: Stage)] = []

    var isEmpty: Bool { waiting.isEmpty }

    /// What one call to `advance` did.
    enum Step {
        /// Nothing can move until more is read from the server.
        case waiting
        /// A stage ended: the events read with its reply come first.
        case progressed
        case synced(id: Int, failure: String?)
    }

    mutating func start(_ id: Int, x: XConnection, reader: XConnection, input: XConnection) {
        waiting.append((id, .firstRoundTrips([x, reader, input].map { ($0, $0.sendRoundTrip()) })))
    }

    /// When the loop must wake to stop waiting for window reads.
    var deadline: Deadline? {
        guard case .reads(let until)? = waiting.first?.stage else { return nil }
        return Deadline(milliseconds: until)
    }

    /// Moves the oldest sync on, never waiting. Called once every event read is handled and
    /// no window read can move on; the wait for the windows being read ends in
    /// `startSecondRoundTrip`.
    mutating func advance(now: Int64) -> Step {
        guard let (id, stage) = waiting.first else { return .waiting }
        switch stage {
        case .firstRoundTrips, .secondRoundTrips:
            return collect(now: now) ? .progressed : .waiting
        case .reads:
            return .waiting
        case .done(let failure):
            waiting.removeFirst()
            return .synced(id: id, failure: failure)
        }
    }

    /// Whether `advance` has something to do before the socket is readable again: a stage
    /// ended, or its reply came (pulled into libxcb by another read), which is collected.
    mutating func canAdvance(now: Int64) -> Bool {
        if collect(now: now) { return true }
        if case .done? = waiting.first?.stage { return true }
        return false
    }

    /// Sends the oldest sync's second round trip once its windows are read (or the time for
    /// them ran out): called only when the daemon has handled and settled every event read
    /// (the display is about to sleep), so that what it sent for them goes before the round
    /// trip. Returns whether it sent one.
    mutating func startSecondRoundTrip(x: XConnection, input: XConnection, readsBusy: Bool, now: Int64) -> Bool {
        guard case .reads(let until)? = waiting.first?.stage, !readsBusy || now >= until else { return false }
        waiting[0].stage = .secondRoundTrips([x, input].map { ($0, $0.sendRoundTrip()) })
        return true
    }

    /// Takes the oldest sync's next round-trip reply if it has come; true when it has. A
    /// stage ends here and `readsBusy` is judged in a later call, after the events read with
    /// it.
    private mutating func collect(now: Int64) -> Bool {
        var trips: [RoundTrip]
        let first: Bool
        switch waiting.first?.stage {
        case .firstRoundTrips(let pending)?: (trips, first) = (pending, true)
        case .secondRoundTrips(let pending)?: (trips, first) = (pending, false)
        default: return false
        }
        let trip = trips.removeFirst()
        switch trip.connection.poll(trip.reply) {
        case .notYet: return false
        case .value where !trips.isEmpty: waiting[0].stage = first ? .firstRoundTrips(trips) : .secondRoundTrips(trips)
        case .value: waiting[0].stage = first ? .reads(until: now + Self.readsLimitMs) : .done(failure: nil)
        case .failed(let error):
            for other in trips { other.connection.discard(other.reply) }
            waiting[0].stage = .done(failure: "X server round trip failed: \(error)")
        }
        return true
    }
}
