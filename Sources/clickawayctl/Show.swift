import ClickawayCommandLine
import ClickawayConfig
import ClickawayControl
import ClickawayCore
import ClickawaySystem

/// `clickawayctl show [POPUP...] [--for SECONDS] [--all] [--off]`: the running daemon draws
/// its live model on the screen for a while (the `show` request); `show --svg FILE`: what a
/// press would do anywhere on the screen, drawn offline from the same engine `hit` asks, as
/// an SVG picture (`DecisionEngine.decisionMap`).
struct Show: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Draw the open popups' hit areas on the screen, or what a press would do anywhere as an SVG file.",
        discussion: """
            Without --svg the running daemon draws, on every output, each open popup's regions \
            (dashed: passthrough, dotted: redirect) with the slop around them (thin dotted), its \
            anchors (green), the exclusions (grey), the windows of its family, the edges of the holes \
            where clicks never reach the daemon (cyan: the shield, Wayland and GNOME) and a label with each \
            popup's and region's name, from the model and geometry the decisions use, kept current \
            as popups open, close and move. It draws the POPUPs named (every open one when none is), \
            for --for seconds or until show --off, the Escape key (X11's grab mode, or a popup with escape = true open) or a reload without them; clicks and pointer motion \
            pass through the drawing untouched; popups that are not open yet are drawn when they open. With --svg it works offline against a configuration, \
            with the popups named by --open open (every rect popup when none is named), later ones on \
            top: each open popup's regions are filled where a press hits them and outlined (dashed: \
            passthrough, dotted: redirect, thin: the slop around them), with their names; anchors \
            green, exclusions grey; red where a press dismisses something.
            """)

    @Argument(help: ArgumentHelp("A popup to draw (every open one when none is named).", valueName: "popup"), completion: .popupNames)
    var popups: [String] = []

    @Option(name: .customLong("for"), help: ArgumentHelp("How long the daemon draws, 1 to 3600 seconds.", valueName: "seconds"))
    var seconds: Int = ShowRequest.defaultSeconds

    @Flag(name: .long, help: "Also draw the closed rect popups, whose place is known.")
    var all = false

    @Flag(name: .long, help: "Stop drawing now.")
    var off = false

    @Option(name: .long, help: ArgumentHelp("Write the picture to this file (- for standard output) instead of drawing on the screen.", valueName: "file"),
            completion: .file(extension: "svg"))
    var svg: String?

    @Option(name: [.customShort("c"), .long], help: ArgumentHelp("With --svg: the configuration file instead of the XDG lookup.", valueName: "file"),
            completion: .file(extension: "toml"))
    var config: String?

    @Option(name: .long, help: ArgumentHelp("With --svg: the screen's size.", valueName: "WxH"))
    var screen = "1920x1080"

    @Option(name: .long, help: "With --svg: mark a popup open: NAME, or NAME=X,Y,W,H for a window popup.", completion: .popupNames)
    var open: [String] = []

    func validate() throws {
        if svg != nil {
            guard popups.isEmpty, !all, !off, seconds == ShowRequest.defaultSeconds else {
                throw ValidationError("--svg draws offline: name its popups with --open, and leave out POPUP, --for, --all and --off")
            }
            _ = try size()
            return
        }
        guard config == nil, open.isEmpty, screen == "1920x1080" else {
            throw ValidationError("--config, --screen and --open go with --svg; the daemon draws its own configuration")
        }
        guard (1...ShowRequest.maxSeconds).contains(seconds) else {
            throw ValidationError("--for \(seconds): from 1 to \(ShowRequest.maxSeconds) seconds")
        }
        if off && (!popups.isEmpty || all) { throw ValidationError("--off stops the drawing: it takes no POPUP and no --all") }
    }

    private func size() throws -> (width: Int32, height: Int32) {
        let parts = screen.split(separator: "x").compactMap { Int32($0) }
        guard parts.count == 2, parts[0] > 0, parts[1] > 0, parts[0] <= 1 << 15, parts[1] <= 1 << 15 else {
            throw ValidationError("--screen \(screen): the size is WIDTHxHEIGHT in pixels, e.g. 1920x1080")
        }
        return (parts[0], parts[1])
    }

    func run() throws {
        guard let svg else { return try drawOnScreen() }
        let engine = try OfflineEngine.load(config: config, open: open, rectPopupsByDefault: true)
        let (width, height) = try size()
        let picture = DecisionPicture.svg(engine, screen: Rect(x: 0, y: 0, width: width, height: height))
        if svg == "-" {
            print(picture, terminator: "")
            return
        }
        if let failure = FileSystem.write(picture, to: svg) {
            printError("clickawayctl: cannot write \(svg): \(failure)")
            throw ExitCode(2)
        }
        if engine.open.isEmpty { printError("clickawayctl: no popup is open: the picture shows only anchors and exclusions") }
    }

    private func drawOnScreen() throws {
        let request = off ? ShowRequest.stop : ShowRequest(popups: popups, seconds: seconds, all: all)
        let reply = try callDaemon(.show(request))
        let shown = try understood { () throws(MalformedReply) in try ShowReply(reply: reply) }
        if off {
            print(shown.stopped ? "stopped drawing" : "nothing was being drawn")
            return
        }
        let what = shown.popups.isEmpty
            ? (popups.isEmpty ? "no popup is open: drawing the popups" : "not open: drawing \(popups.joined(separator: ", "))")
                + " as they open"
            : "drawing \(shown.popups.joined(separator: ", "))"
        print("\(what) on \(counted(shown.outputs, "output")) for \(shown.seconds) s (clickawayctl show --off stops it)")
    }
}

/// The SVG text of a decision map: cells filled by what a press there does, region outlines
/// and names on top. Each cell carries its decision in `data-` attributes, for tests.
enum DecisionPicture {
    static func svg(_ engine: DecisionEngine, screen: Rect) -> String {
        var out = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(screen.width)" height="\(screen.height)" \
            viewBox="\(screen.x) \(screen.y) \(screen.width) \(screen.height)">
            <rect x="\(screen.x)" y="\(screen.y)" width="\(screen.width)" height="\(screen.height)" fill="#ffffff"/>

            """
        let popups = engine.model.popups.map(\.name)
        for cell in engine.decisionMap(in: screen, time: 10_000) {
            let fill: String
            switch cell.reason {
            case .inside: fill = colour(of: cell.popup.flatMap(popups.firstIndex) ?? 0)
            case .anchor: fill = "#3a9a3a"
            case .exclusion: fill = "#8a8a8a"
            default: fill = cell.dismisses ? "#e04040" : "none"
            }
            guard fill != "none" else { continue }
            out += "<rect x=\"\(cell.rect.x)\" y=\"\(cell.rect.y)\" width=\"\(cell.rect.width)\" height=\"\(cell.rect.height)\" "
                + "fill=\"\(fill)\" fill-opacity=\"\(cell.reason == .outside ? "0.15" : "0.45")\" data-reason=\"\(cell.reason.rawValue)\""
                + (cell.region.map { " data-region=\"\(escaped($0))\"" } ?? "")
                + (cell.dismisses ? " data-dismisses=\"true\"" : "") + "/>\n"
        }
        for outline in engine.regionOutlines() {
            if outline.hitArea != outline.rect {
                out += rectOutline(outline.hitArea, stroke: "#404040", width: 1, dash: "2,2")
            }
            let dash = outline.passthrough ? "8,4" : outline.redirects ? "1,3" : nil
            out += rectOutline(outline.rect, stroke: "#202020", width: outline.isPopup ? 3 : 1.5, dash: dash)
            out += "<text x=\"\(outline.rect.x + 4)\" y=\"\(outline.rect.y + 14)\" font-family=\"sans-serif\" font-size=\"12\" "
                + "fill=\"#000000\">\(escaped(outline.path))</text>\n"
        }
        for area in engine.configAreas + engine.windowAreas {
            out += rectOutline(area.rect, stroke: area.kind == .exclusion ? "#505050" : "#206020", width: 2, dash: nil)
        }
        return out + "</svg>\n"
    }

    private static func rectOutline(_ r: Rect, stroke: String, width: Double, dash: String?) -> String {
        "<rect x=\"\(r.x)\" y=\"\(r.y)\" width=\"\(r.width)\" height=\"\(r.height)\" fill=\"none\" stroke=\"\(stroke)\" "
            + "stroke-width=\"\(width)\"" + (dash.map { " stroke-dasharray=\"\($0)\"" } ?? "") + "/>\n"
    }

    /// One of eight hues per popup, in configuration order.
    private static func colour(of popup: Int) -> String {
        ["#3070d0", "#d08020", "#8040c0", "#20a0a0", "#c03080", "#709020", "#4050a0", "#a06040"][popup % 8]
    }

    private static func escaped(_ text: String) -> String {
        var s = ""
        for c in text.unicodeScalars {
            switch c {
            case "&": s += "&amp;"
            case "<": s += "&lt;"
            case ">": s += "&gt;"
            case "\"": s += "&quot;"
            default: s.unicodeScalars.append(c)
            }
        }
        return s
    }
}
