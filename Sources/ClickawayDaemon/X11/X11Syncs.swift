internal import ClickawaySystem
internal import ClickawayX11

/// The `sync`s asked of the X display (`clickawayctl sync`, `add --window`), oldest first,
/// none of them waited for: each is a round trip on both connections (the daemon's and the
/// window reads'), after whose replies the events the server sent before them are handled;
/// then the windows being read are read to the end (a burst of windows may keep them coming:
/// at most `readsLimitMs`); then, once the daemon has settled what it handled (the display
/// is about to sleep: `startSecondRoundTrip`), a second round trip, after which the server
/// has processed what the daemon sent for those events. Replies are collected between
/// events, as the window reads' are.
struct X11Syncs {
    static let readsLimitMs: Int64 = 1000

    private enum Stage {
        case firstRoundTrip(PendingReply<Void>, reads: PendingReply<Void>)
        /// The daemon's round trip is answered; the reads' connection's is awaited.
        case readsRoundTrip(PendingReply<Void>)
        case reads(until: Int64)
        case secondRoundTrip(PendingReply<Void>)
        case done(failure: String?)
    }

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

    mutating func start(_ id: Int, x: XConnection, reader: XConnection) {
        waiting.append((id, .firstRoundTrip(x.sendRoundTrip(), reads: reader.sendRoundTrip())))
    }

    /// When the loop must wake to stop waiting for window reads.
    var deadline: Deadline? {
        guard case .reads(let until)? = waiting.first?.stage else { return nil }
        return Deadline(milliseconds: until)
    }

    /// Moves the oldest sync on, never waiting. Called once every event read is handled and
    /// no window read can move on; the wait for the windows being read ends in
    /// `startSecondRoundTrip`.
    mutating func advance(x: XConnection, reader: XConnection, now: Int64) -> Step {
        guard let (id, stage) = waiting.first else { return .waiting }
        switch stage {
        case .firstRoundTrip, .readsRoundTrip, .secondRoundTrip:
            return collect(x: x, reader: reader, now: now) ? .progressed : .waiting
        case .reads:
            return .waiting
        case .done(let failure):
            waiting.removeFirst()
            return .synced(id: id, failure: failure)
        }
    }

    /// Whether `advance` has something to do before the socket is readable again: a stage
    /// ended, or its reply came (pulled into libxcb by another read), which is collected.
    mutating func canAdvance(x: XConnection, reader: XConnection, now: Int64) -> Bool {
        if collect(x: x, reader: reader, now: now) { return true }
        if case .done? = waiting.first?.stage { return true }
        return false
    }

    /// Sends the oldest sync's second round trip once its windows are read (or the time for
    /// them ran out): called only when the daemon has handled and settled every event read
    /// (the display is about to sleep), so that what it sent for them goes before the round
    /// trip. Returns whether it sent one.
    mutating func startSecondRoundTrip(x: XConnection, readsBusy: Bool, now: Int64) -> Bool {
        guard case .reads(let until)? = waiting.first?.stage, !readsBusy || now >= until else { return false }
        waiting[0].stage = .secondRoundTrip(x.sendRoundTrip())
        return true
    }

    /// Takes the oldest sync's round-trip reply if it has come; true when it has. A stage
    /// ends here and `readsBusy` is judged in a later call, after the events read with it.
    private mutating func collect(x: XConnection, reader: XConnection, now: Int64) -> Bool {
        let poll: ReplyPoll<Void>
        let after: Stage
        switch waiting.first?.stage {
        case .firstRoundTrip(let pending, let reads)?: (poll, after) = (x.poll(pending), .readsRoundTrip(reads))
        case .readsRoundTrip(let pending)?: (poll, after) = (reader.poll(pending), .reads(until: now + Self.readsLimitMs))
        case .secondRoundTrip(let pending)?: (poll, after) = (x.poll(pending), .done(failure: nil))
        default: return false
        }
        switch poll {
        case .notYet: return false
        case .value: waiting[0].stage = after
        case .failed(let error): waiting[0].stage = .done(failure: "X server round trip failed: \(error)")
        }
        return true
    }
}
