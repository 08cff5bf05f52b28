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
            guard case .number(1) = try bus.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                                 "NameHasOwner", [service], milliseconds: milliseconds) else {
                throw DesktopServiceUnavailable(isRunning: false, reason: "\(name) (\(service)) is not on the session bus at \(address)")
            }
            return bus
        } catch let error as DesktopServiceUnavailable {
            throw error
        } catch {
            throw DesktopServiceUnavailable(isRunning: false, reason: "\(error)")
        }
    }
}
