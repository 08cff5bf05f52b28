internal import ClickawaySystem
internal import Glibc
internal import Logging
internal import SystemPackage

/// A rejected configuration, shown on the desktop: i3 and sway show a bar, but nobody reads
/// the journal while editing. `notify-send` (libnotify-bin) speaks the freedesktop
/// Notifications interface on the session bus, so the daemon needs no D-Bus code of its own: it
/// runs it as it runs a dismiss command (no shell, the diagnostic an argument, no descriptor
/// but the standard ones, reaped on SIGCHLD), and kills it if it hangs (a session bus that
/// activates no notification daemon). `[settings] notify = false` turns it off.
struct DesktopNotifications {
    static let program = "notify-send"
    /// notify-send's own wait for the bus is 25 s; the daemon does not keep it that long.
    static let killAfterMs: Int64 = 10_000
    /// How much of the diagnostics the notification shows; `clickawayctl status` has them all.
    static let bodyLines = 12
    /// Replaces the previous rejection's notification on dunst (and servers that know the hint).
    static let stackTag = "clickaway-config"

    /// notify-send was not found on PATH: said once, then not tried again.
    var missing = false
    /// There is no session bus: said once.
    var saidNoBus = false

    /// Whether the environment names a session bus: $DBUS_SESSION_BUS_ADDRESS, or systemd's
    /// $XDG_RUNTIME_DIR/bus. Without one GLib would autolaunch a bus of its own (dbus-launch),
    /// which nobody's notification daemon listens on.
    static func hasSessionBus(_ environment: [String: String]) -> Bool { sessionBusAddress(environment) != nil }

    /// The session bus's address, from the same places (nil: none).
    static func sessionBusAddress(_ environment: [String: String]) -> String? {
        if let address = environment["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty { return address }
        guard let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty, access(runtime + "/bus", F_OK) == 0 else { return nil }
        return "unix:path=" + runtime + "/bus"
    }

    /// notify-send's command line: the summary and the body are arguments after `--`, never
    /// options, whatever they contain.
    static func arguments(diagnostics: String, running: RunningConfig) -> [String] {
        [program, "--app-name=clickaway", "--urgency=critical", "--icon=dialog-error",
         "--hint=string:x-dunst-stack-tag:\(stackTag)", "--", "clickaway: configuration rejected",
         body(diagnostics: diagnostics, running: running)]
    }

    /// What is running now, then the first `bodyLines` lines of the diagnostics, with the
    /// characters the notification body's markup would take escaped.
    static func body(diagnostics: String, running: RunningConfig) -> String {
        let now = switch running {
        case .files: "The previous configuration keeps running."
        case .lastGood: "Running the last configuration that loaded until the errors are fixed."
        case .none: "Running with no popups until the errors are fixed."
        }
        var lines = diagnostics.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        while lines.last?.isEmpty == true { lines.removeLast() }
        let shown = lines.prefix(bodyLines)
        var text = ([now] + shown).joined(separator: "\n")
        if lines.count > bodyLines { text += "\n… \(lines.count - bodyLines) more lines: clickawayctl status shows them all." }
        return escapeMarkup(text)
    }

    /// The notification specification's body markup is a subset of HTML: `&`, `<` and `>` in
    /// a diagnostic are text.
    static func escapeMarkup(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}

extension DismissCommands {
    /// Shows a rejected configuration's diagnostics as a desktop notification, unless the
    /// running configuration says `notify = false`; never waits for it.
    func notifyRejected(_ diagnostics: String, running: RunningConfig, enabled: Bool) {
        guard enabled, !desktop.missing else { return }
        guard DesktopNotifications.hasSessionBus(processEnvironment()) else {
            if !desktop.saidNoBus {
                desktop.saidNoBus = true
                logger.notice("no session bus (neither DBUS_SESSION_BUS_ADDRESS nor $XDG_RUNTIME_DIR/bus): a rejected configuration is not shown as a desktop notification")
            }
            return
        }
        let argv = DesktopNotifications.arguments(diagnostics: diagnostics, running: running)
        do {
            try runHelper(argv, killAfterMs: DesktopNotifications.killAfterMs, now: MonotonicClock.milliseconds()) { [logger] exit, killed in
                if killed {
                    logger.warning("notify-send did not finish within \(DesktopNotifications.killAfterMs / 1000) s and was killed: is a notification daemon running on the session bus?")
                } else if !exit.succeeded {
                    logger.warning("notify-send failed (\(exit)): is a notification daemon running on the session bus?")
                } else {
                    logger.debug("the rejected configuration was shown as a desktop notification")
                }
            }
        } catch {
            if error.errno == .noSuchFileOrDirectory {
                desktop.missing = true
                logger.warning("cannot show the rejected configuration as a desktop notification: notify-send is not on PATH (install libnotify-bin, or set notify = false in [settings]); not trying again")
            } else {
                logger.warning("cannot show the rejected configuration as a desktop notification: \(error)")
            }
        }
    }
}
