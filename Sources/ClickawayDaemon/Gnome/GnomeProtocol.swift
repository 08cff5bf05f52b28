internal import ClickawayCore
internal import ClickawayJSON

/// What clickaway's GNOME Shell extension and the daemon say to each other, defined here
/// once: `javaScript` is the extension's `protocol.js` (data/gnome-shell/), which a test
/// holds to it, so both ends share one definition.
///
/// The shape is KWin's (`KWinScript`): the daemon owns `busName` on the session bus and
/// exports one object; the extension watches the name and calls `Event(s) -> s` with one
/// JSON object per event (`ev`), and holds a `Wait() -> s` long poll that the daemon answers
/// when it has commands of its own. Every reply is a JSON array of commands (objects with
/// `cmd`). The extension never waits: every call is asynchronous, and a press not answered
/// within `answerLimitMs` takes its layer down. docs/design/gnome-extension.md has what was
/// run and why.
enum GnomeProtocol {
    /// Raised when a message changes meaning; the extension's metadata `version` is this, and
    /// its hello says it: the daemon refuses another.
    static let version = 1
    static let uuid = "clickaway@clickaway.github.io"
    static let busName = "io.github.clickaway"
    static let path = "/io/github/clickaway/Gnome"
    static let interface = "io.github.clickaway.Gnome1"
    /// The GNOME Shell versions each entry file is for (metadata `shell-version`).
    static let importsShellVersions = ["43", "44"]
    static let moduleShellVersions = ["45", "46", "47", "48"]

    /// A press the daemon has not answered this long: the daemon is taken as stalled and the
    /// layer goes, so the desktop stays clickable.
    static let answerLimitMs = 1000
    /// How long the pinhole a replayed click goes through stays open at most (the virtual
    /// pointer's events are handled on a later turn of the Shell's main loop).
    static let pinholeMs = 100
    /// The most rectangles one `show` carries (about 25 bytes each): a picture with more is
    /// drawn without the rest, which are its top ones (labels first).
    static let showFillLimit = 16384

    /// Events, the `ev` of each object the extension sends.
    enum Event: String, CaseIterable {
        /// Once per connection, first: `protocol`, `shell` (its version), `windows` (each as
        /// in `window`), `stacking`, `monitors`.
        case hello
        /// A press on the layer: `id`, `x`, `y`, `button` (X11's numbering), `time`. Its
        /// reply answers it (`answer`).
        case press
        /// The release of a press the layer took: `id`, `x`, `y`, `button`.
        case release
        /// The Escape key, grabbed while the daemon asks (`escape`): `time`.
        case escape
        /// A window shown or changed: `window` with `id`, `x`, `y`, `width`, `height` (its
        /// frame), `pid`, `wmClass`, `instance`, `appId`, `title`, `type`, `parent`, `visible`.
        case window
        /// A window is gone: `id`.
        case gone
        /// The windows bottom to top: `ids`.
        case stacking
        /// The monitors changed: `monitors` (`name`, `x`, `y`, `width`, `height`).
        case monitors
        /// The answer to `ping`: `ticket`; every event sent before it has come.
        case pong
        /// A window the daemon asked to close cannot be: `id`, `why`.
        case refused
        /// The layer went without the daemon asking: `why` (no answer in time).
        case layerDown = "layer-down"
        /// The extension is being disabled: nothing more comes from this connection.
        case bye
    }

    /// Commands, the objects in a reply (`cmd`).
    enum Command: String, CaseIterable {
        /// `decision` for the press `id`: `swallow`, or `replay` (it goes on to what is
        /// under it once released).
        case answer
        /// The layer: `holes` (rectangles `[x, y, width, height]` in stage coordinates
        /// where clicks go through), or null for no layer.
        case holes
        /// Close the window `id` as its close button would.
        case close
        /// Take the Escape key while `on`.
        case escape
        /// Answer with `pong` and `ticket`.
        case ping
        /// `clickawayctl show`'s picture: `fills`, solid rectangles `[x, y, width, height,
        /// 0xRRGGBB]` in stage coordinates, later ones on top, drawn above every window and
        /// taking no input; null takes the drawing away.
        case show
    }

    /// The D-Bus errors the daemon answers with: a hello from a peer that is not GNOME Shell,
    /// a `Wait` from a peer that did not say hello.
    static let notShellError = "io.github.clickaway.Error.NotGnomeShell"
    static let notConnectedError = "io.github.clickaway.Error.NotConnected"

    /// The answers a press may get.
    enum Answer: String, CaseIterable {
        case swallow, replay
    }

    /// Commands as the extension reads them, one JSON object each.
    static func answer(_ press: Int64, _ answer: Answer) -> String {
        #"{"cmd":"\#(Command.answer.rawValue)","id":\#(press),"decision":"\#(answer.rawValue)"}"#
    }
    static func holes(_ holes: [Rect]?) -> String {
        let list = holes.map { JSON.array($0.map { r in .array([r.x, r.y, r.width, r.height].map { .int(Int64($0)) }) }).text } ?? "null"
        return #"{"cmd":"\#(Command.holes.rawValue)","holes":\#(list)}"#
    }
    static func close(_ window: UInt32) -> String { #"{"cmd":"\#(Command.close.rawValue)","id":\#(window)}"# }
    static func escape(_ on: Bool) -> String { #"{"cmd":"\#(Command.escape.rawValue)","on":\#(on)}"# }
    static func ping(_ ticket: Int) -> String { #"{"cmd":"\#(Command.ping.rawValue)","ticket":\#(ticket)}"# }
    /// At most `showFillLimit` of `fills`, the bottom ones.
    static func show(_ fills: [ShowPicture.Fill]?) -> String {
        let list = fills.map { "[" + $0.prefix(showFillLimit).map { f in "[\(f.rect.x),\(f.rect.y),\(f.rect.width),\(f.rect.height),\(f.colour)]" }
            .joined(separator: ",") + "]" } ?? "null"
        return #"{"cmd":"\#(Command.show.rawValue)","fills":\#(list)}"#
    }

    /// `protocol.js`: the constants above, for the extension.
    static var javaScript: String {
        func list(_ words: [String]) -> String { "[" + words.map { JSON.string($0).text }.joined(separator: ", ") + "]" }
        func table<E: RawRepresentable & CaseIterable>(_ type: E.Type) -> String where E.RawValue == String {
            "{ " + E.allCases.map { "\(jsName($0.rawValue)): \(JSON.string($0.rawValue).text)" }.joined(separator: ", ") + " }"
        }
        return """
            // Written from Sources/ClickawayDaemon/Gnome/GnomeProtocol.swift (GnomeProtocol.javaScript); a test holds it to it.
            const PROTOCOL = Object.freeze({
                version: \(version),
                uuid: \(JSON.string(uuid).text),
                busName: \(JSON.string(busName).text),
                path: \(JSON.string(path).text),
                iface: \(JSON.string(interface).text),
                answerLimitMs: \(answerLimitMs),
                pinholeMs: \(pinholeMs),
                ev: Object.freeze(\(table(Event.self))),
                cmd: Object.freeze(\(table(Command.self))),
                answers: Object.freeze(\(list(Answer.allCases.map(\.rawValue)))),
            });

            """
    }

    /// `layer-down` as a JavaScript property name: `layerDown`.
    private static func jsName(_ word: String) -> String {
        let parts = word.split(separator: "-")
        return parts.enumerated().map { $0.offset == 0 ? String($0.element) : $0.element.prefix(1).uppercased() + $0.element.dropFirst() }.joined()
    }

    /// The metadata.json of the entry file for `shellVersions`.
    static func metadata(shellVersions: [String]) -> String {
        """
        {
          "uuid": \(JSON.string(uuid).text),
          "name": "clickaway",
          "description": "Closes popups when you click outside them: the GNOME side of the clickaway daemon, which it needs on GNOME Wayland.",
          "url": "https://github.com/clickaway/clickaway",
          "shell-version": \(JSON.array(shellVersions.map { .string($0) }).text),
          "version": \(version)
        }

        """
    }
}
