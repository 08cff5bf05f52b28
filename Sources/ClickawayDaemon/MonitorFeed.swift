internal import ClickawayControl
internal import ClickawayCore
internal import ClickawayJSON

/// The events `monitor` clients receive: each change of the open popups announced once
/// (`opened`, `closed`), and whatever else the daemon reports.
struct MonitorFeed {
    let control: ControlServer
    /// The open popups last announced, by instance, as they were described then (a reload
    /// may rename or remove their popups), with the rectangle of the last call: a window
    /// popup moves and resizes without being announced again. Kept only while some client
    /// listens (`listening`): with none, a burst of popup windows costs nothing here.
    private var announced: [InstanceID: Announced] = [:]
    private var listening = false

    private struct Announced {
        var popup: OpenPopup
        /// The family's windows as the window source gave them (`popup.members`, unwritten).
        var members: [FamilyMember]
    }

    init(control: ControlServer) { self.control = control }

    func send(_ event: MonitorEvent) {
        guard control.hasSubscribers else { return }
        control.broadcast(event.json.text)
    }

    /// Announces what opened and closed since the last call, and open popups whose windows
    /// (their family) changed. In proportion to what changed: an instance already announced
    /// is looked up, not described again unless its family changed, and what closed is
    /// looked for only when some did (a refresh with two thousand popups open writes nothing).
    mutating func announce(_ open: [PopupInstance], windows: any WindowSource, describe: (PopupInstance) -> OpenPopup) {
        guard control.hasSubscribers else {
            (announced, listening) = ([:], false)
            return
        }
        guard listening else { return listen(open, windows: windows, describe: describe) }
        var stillOpen = 0
        /// In `open`'s order: each new instance (`opened`) or one whose family changed (`family`).
        var events: [(id: InstanceID, opened: Bool)] = []
        var opened: [InstanceID: Announced] = [:]
        for o in open {
            let members = o.id.window.map(windows.familyMembers(of:)) ?? []
            guard let index = announced.index(forKey: o.id) else {
                opened[o.id] = Announced(popup: describe(o), members: members)
                events.append((o.id, true))
                continue
            }
            stillOpen += 1
            // The rectangle decided with now (a window moved or resized since): what a
            // `family` or `closed` event of it carries.
            announced.values[index].popup.rect = o.rect
            if announced.values[index].members != members {
                let now = describe(o)
                (announced.values[index].popup.members, announced.values[index].popup.ties) = (now.members, now.ties)
                announced.values[index].members = members
                events.append((o.id, false))
            }
        }
        if stillOpen != announced.count {
            let ids = Set(open.map(\.id))
            for (id, entry) in announced where !ids.contains(id) {
                send(.closed(entry.popup))
                announced[id] = nil
            }
        }
        announced.merge(opened) { $1 }
        for (id, isNew) in events {
            let popup = announced[id]!.popup
            send(isNew ? .opened(popup) : .family(popup))
        }
    }

    /// A client subscribed (its request settled first): what is open now counts as
    /// announced, so that it hears of what changes from here on and nothing before.
    mutating func listen(_ open: [PopupInstance], windows: any WindowSource, describe: (PopupInstance) -> OpenPopup) {
        guard !listening else { return }
        listening = true
        for o in open {
            announced[o.id] = Announced(popup: describe(o), members: o.id.window.map(windows.familyMembers(of:)) ?? [])
        }
    }
}
