internal import ClickawayDBus

/// Why a desktop's service on the session bus (KWin, GNOME Shell) cannot be used: it is not
/// there (`isRunning` false: not that desktop), or it is and something on the way failed
/// (`reason` says what, or what to run).
struct DesktopServiceUnavailable: Error {
    var isRunning: Bool
    var reason: String
}

extension BusConnection {
    /// The session bus at `address`, once `service` (`named` for messages) is found on it:
    /// the first step of both KWin's windows and GNOME Shell's display.
    static func reaching(_ service: String, named name: String, at address: String, description: String,
                         milliseconds: UInt64) throws(DesktopServiceUnavailable) -> BusConnection {
        do {
            let bus = try BusConnection(address: address, description: description)
            guard case .number(1) = try bus.askBus("NameHasOwner", about: service, milliseconds: milliseconds) else {
                throw DesktopServiceUnavailable(isRunning: false, reason: "\(name) (\(service)) is not on the session bus at \(address)")
            }
            return bus
        } catch let error as DesktopServiceUnavailable {
            throw error
        } catch {
            throw DesktopServiceUnavailable(isRunning: false, reason: "\(error)")
        }
    }

    /// The unique name that owns `name` now, or nil (none, or no answer within `milliseconds`).
    func owner(of name: String, milliseconds: UInt64) -> String? {
        guard case .text(let owner) = try? askBus("GetNameOwner", about: name, milliseconds: milliseconds) else { return nil }
        return owner
    }

    /// A question to the bus itself (org.freedesktop.DBus) about `name`.
    private func askBus(_ member: String, about name: String, milliseconds: UInt64) throws(Failure) -> Value {
        try call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", member, [name], milliseconds: milliseconds)
    }
}
