import ClickawayCommandLine
import ClickawayConfig
import ClickawayJSON
import ClickawayX11

/// `clickawayctl pick`: click a window, get a `[[popup]]` block that matches it
/// (`XConnection.pickWindow`, `PopupSuggestion`). Talks to the X server, not to the daemon.
struct Pick: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Click a window and print a [[popup]] block that matches it.",
        discussion: """
            Grabs the pointer until you click: button 1 picks the window under the pointer, any \
            other button (not the wheel) cancels. Works with or without the daemon running. \
            X11 only: on sway, `swaymsg -t get_tree` shows the app_id and title to match. A window \
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
        let x: XConnection
        do {
            x = try XConnection(display: display)
        } catch {
            printError("clickawayctl: \(error)" + (error == .noDisplay ? "; pass --display, e.g. --display :0" : ""))
            throw ExitCode(2)
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
            printError("clickawayctl: \(failure); nothing picked")
            throw ExitCode(1)
        } catch let error as XError {
            printError("clickawayctl: \(error)")
            if case .connectionLost = error { throw ExitCode(2) }
            throw ExitCode(1)
        }
    }
}
