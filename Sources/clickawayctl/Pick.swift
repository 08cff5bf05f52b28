import ClickawayCommandLine
import ClickawayConfig
import ClickawayControl
import ClickawayCore
import ClickawayJSON
import ClickawayX11
import Glibc

/// `clickawayctl pick`: click a window, get a `[[popup]]` block that matches it
/// (`XConnection.pickWindow`, `PopupSuggestion`). Talks to the X server; on sway and KDE
/// Plasma, to the daemon.
struct Pick: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Click a window and print a [[popup]] block that matches it.",
        discussion: """
            Grabs the pointer until you click: button 1 picks the window under the pointer, any \
            other button (not the wheel) cancels. Works with or without the daemon running. \
            On sway (WAYLAND_DISPLAY and SWAYSOCK set, no --display) the daemon, which must be running, \
            takes the click on its overlay and names the window under it from sway's tree: the block \
            matches its app_id (an Xwayland window's class). So on KDE Plasma (XDG_CURRENT_DESKTOP \
            KDE), where the daemon follows KWin's windows through a KWin script. On other Wayland \
            compositors it says what to do instead, and with Xwayland it sees X windows only. A window \
            without WM_CLASS gets a title match, and an override-redirect window that does not take \
            WM_DELETE_WINDOW gets dismiss = "kill".
            Exit status: 0 picked; 1 nothing picked (cancelled, timed out, clicked the desktop, \
            the pointer grabbed by another program); 2 the X server cannot be reached.
            """)

    @Option(name: .long, help: "The X display (default: $DISPLAY).")
    var display: String?

    @Option(name: .long, help: "Give up after this many seconds without a click.")
    var timeout: Int = 30

    @Flag(name: .long, help: "Print one JSON object instead of TOML.")
    var json = false

    func validate() throws {
        guard timeout > 0 else { throw ValidationError("--timeout is a number of seconds, at least 1") }
    }

    func run() throws {
        // In a Wayland session pick reaches only X clients (Xwayland's), if any.
        let wayland = display == nil ? WaylandPickAdvice(environment: Self.environment) : nil
        if let wayland, wayland.compositorKnowsWindows { return try pickThroughDaemon(wayland) }
        let x: XConnection
        do {
            x = try XConnection(display: display)
        } catch {
            if let wayland {
                printError("clickawayctl: pick works on X11 only, and this Wayland session has no X display to pick from (\(error)). "
                           + wayland.text)
            } else {
                printError("clickawayctl: \(error)" + (error == .noDisplay ? "; pass --display, e.g. --display :0" : ""))
            }
            throw ExitCode(2)
        }
        if let wayland {
            printError("clickawayctl: this is a Wayland session: pick sees only X11 (Xwayland) windows; a click on a native "
                       + "Wayland window does not reach it. " + wayland.text)
        }
        do {
            let picked = try x.pickWindow(within: .seconds(timeout)) {
                printError("clickawayctl: click the window to describe with button 1 (another button cancels; giving up after \(timeout) s)")
            }
            let suggestion = PopupSuggestion(
                client: hex(picked.client), frame: picked.topLevel == picked.client ? nil : hex(picked.topLevel),
                rect: picked.rect, properties: picked.properties, acceptsDelete: picked.acceptsDelete,
                overrideRedirect: picked.overrideRedirect)
            print(json ? suggestion.json.text : suggestion.toml)
        } catch let failure as NothingPicked {
            printError("clickawayctl: \(failure); nothing picked"
                       + (wayland == nil ? "" : " (a native Wayland window cannot be picked: see above)"))
            throw ExitCode(1)
        } catch let error as XError {
            printError("clickawayctl: \(error)")
            if case .connectionLost = error { throw ExitCode(2) }
            throw ExitCode(1)
        }
    }
}

extension Pick {
    /// Through the daemon: its overlay takes the next click, sway's tree or KWin's script
    /// names the window.
    func pickThroughDaemon(_ wayland: WaylandPickAdvice) throws {
        let client: ControlClient
        do {
            client = try connectToDaemon()
        } catch {
            printError("clickawayctl: on \(wayland.sway ? "sway" : "KDE Plasma"), pick asks the daemon, which is not reachable; "
                       + "start it, or find what to match by hand. " + wayland.text)
            throw error
        }
        printError("clickawayctl: click the window to describe with button 1 (another button cancels; giving up after \(timeout) s)")
        let reply: JSON
        do {
            reply = try client.call(ControlRequest.pick(timeoutMs: min(timeout, 3600) * 1000).json,
                                 timeoutMs: Int32(min(timeout, 3600) * 1000 + 5000))
        } catch {
            printError("clickawayctl: \(error)")
            throw ExitCode(2)
        }
        if let refusal = Refusal(reply: reply) {
            printError("clickawayctl: \(refusal.message); nothing picked")
            throw ExitCode(1)
        }
        let view = try understood { () throws(MalformedReply) in try PickReply(reply: reply) }
        let properties = WindowMatch.Properties(windowClass: view.windowClass, instance: view.instance, title: view.title,
                                                appId: view.appId)
        // sway and KWin ask any window to close (`[con_id=N] kill`, closeWindow()): "close".
        let suggestion = PopupSuggestion(client: view.window, frame: nil, rect: view.rect, properties: properties, acceptsDelete: true)
        print(json ? suggestion.json.text : suggestion.toml)
    }

    static var environment: [String: String] {
        var found: [String: String] = [:]
        for name in ["WAYLAND_DISPLAY", "SWAYSOCK", "XDG_CURRENT_DESKTOP", "KDE_FULL_SESSION"] {
            if let value = getenv(name) { found[name] = String(cString: value) }
        }
        return found
    }
}

/// What pick says in a Wayland session, where it cannot see native windows: what to run
/// instead to find what a `[[popup]]` should match.
struct WaylandPickAdvice {
    let sway: Bool
    /// A KDE Plasma session, where the daemon follows KWin's windows through a script.
    let kde: Bool

    /// Nil outside a Wayland session (WAYLAND_DISPLAY unset or empty).
    init?(environment: [String: String]) {
        guard let wayland = environment["WAYLAND_DISPLAY"], !wayland.isEmpty else { return nil }
        sway = !(environment["SWAYSOCK"] ?? "").isEmpty
        kde = (environment["XDG_CURRENT_DESKTOP"] ?? "").split(separator: ":").contains("KDE")
            || !(environment["KDE_FULL_SESSION"] ?? "").isEmpty
    }

    /// Whether the daemon can name the window clicked: it reads sway's or KWin's windows.
    var compositorKnowsWindows: Bool { sway || kde }

    var text: String { sway ? Self.swayText : kde ? Self.kdeText : Self.otherText }

    static let kdeText =
        "On KDE Plasma, KWin describes the window you click: qdbus org.kde.KWin /KWin queryWindowInfo "
            + "(or gdbus call --session -d org.kde.KWin -o /KWin -m org.kde.KWin.queryWindowInfo); match its "
            + #"resourceClass with window = { app_id = "RESOURCECLASS" } (and title = "CAPTION" if need be)."#

    static let swayText =
        #"On sway, list the windows with their app_id (or X class) and title: "#
            + #"swaymsg -t get_tree | jq -r '.. | select(.pid?) | "\(.app_id // .window_properties.class)  \(.name)"' "#
            + #"(or read `swaymsg -t get_tree` as it is), and match a native window with window = { app_id = "APP_ID" } "#
            + #"(and title = "TITLE" if need be), an Xwayland one with window = { class = "CLASS" }."#

    static let otherText =
        "This compositor tells clients nothing of other windows (clickaway's window popups need sway, with $SWAYSOCK, or KWin): "
            + "use a rect popup (rect = [X, Y, W, H] in the configuration, or clickawayctl open --rect X,Y,W,H)."
}
