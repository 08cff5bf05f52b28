internal import ClickawayControl
internal import ClickawayCore
internal import ClickawayJSON

/// The events `monitor` clients receive: each change of the open popups announced once
/// (`opened`, `closed`), and whatever else the daemon reports.
struct MonitorFeed {
    let control: ControlServer
    /// The open popups last announced, by instance, as they were described then: a reload
    /// may rename or remove their popups.
    private var announced: [InstanceID: OpenPopup] = [:]

    init(control: ControlServer) { self.control = control }

    func send(_ event: MonitorEvent) {
        guard control.hasSubscribers else { return }
        control.broadcast(event.json.text)
    }

    /// Announces what opened and closed since the last call, and open popups whose windows
    /// (their family) changed.
    mutating func announce(_ open: [PopupInstance], describe: (PopupInstance) -> OpenPopup) {
        var now: [InstanceID: OpenPopup] = [:]
        for o in open {
            guard let before = announced[o.id] else {
                now[o.id] = describe(o)
                continue
            }
            let members = describe(o).members
            now[o.id] = before
            now[o.id]?.members = members
        }
        for (id, popup) in announced where now[id] == nil { send(.closed(popup)) }
        for o in open {
            guard let popup = now[o.id] else { continue }
            if let before = announced[o.id] {
                if before.members != popup.members { send(.family(popup)) }
            } else {
                send(.opened(popup))
            }
        }
        announced = now
    }
}
