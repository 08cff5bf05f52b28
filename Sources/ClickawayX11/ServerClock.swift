internal import CXCB
internal import ClickawayCore
internal import ClickawaySystem

/// Maps X server timestamps (32-bit milliseconds that wrap every 49.7 days) onto a 64-bit
/// clock, and tells the server's time now without a round trip.
///
/// MapNotify carries no timestamp, so a popup's opening time has to be read off this clock
/// to compare it with a press's time for `grace_ms`.
public struct ServerClock: Sendable {
    /// Server time minus CLOCK_MONOTONIC, in milliseconds.
    private let offset: Int64

    init(offset: Int64) { self.offset = offset }

    /// The server's time now, estimated.
    public func now() -> Int64 { MonotonicClock.milliseconds() + offset }

    /// A server timestamp on the 64-bit clock: the value nearest to `now()` with those low bits.
    @inline(__always)
    public func unwrap(_ time: Timestamp) -> Int64 {
        let estimate = now()
        let delta = Int32(bitPattern: UInt32(truncatingIfNeeded: estimate) &- time)
        return estimate - Int64(delta)
    }
}

extension XConnection {
    /// Reads the server's clock: changes a property on the root window and waits for the
    /// PropertyNotify that carries its time. Call before selecting other events on root:
    /// events read while waiting are dropped.
    public func calibrateClock() throws(XError) -> ServerClock {
        let atom = try internAtom("_CLICKAWAY_CLOCK")
        if let e = check(selectInput(root, .propertyChange)) { throw .request("ChangeWindowAttributes", e) }
        var zero: UInt32 = 0
        xcb_change_property(c, UInt8(XCB_PROP_MODE_REPLACE.rawValue), root, atom, UInt32(XCB_ATOM_INTEGER.rawValue), 32, 1, &zero)
        xcb_delete_property(c, root, atom)
        try sync()
        // Read after the round trip: the stamp was taken before, so the estimate never runs
        // ahead of the server. Ahead, a popup would open in the future and a click in that
        // millisecond would fall inside grace_ms = 0.
        let answeredAt = MonotonicClock.milliseconds()
        var clock: ServerClock?
        while let event = pollQueuedEvent() {
            if clock == nil, case .propertyNotify(let p) = event, p.window == root, p.atom == atom {
                clock = ServerClock(offset: Int64(p.time) - answeredAt)
            }
        }
        if let e = check(selectInput(root, [])) { throw .request("ChangeWindowAttributes", e) }
        // Xorg and Xvfb stamp events with CLOCK_MONOTONIC, so that is the fallback.
        return clock ?? ServerClock(offset: 0)
    }
}
