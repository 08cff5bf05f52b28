internal import ClickawayControl
internal import ClickawayCore
internal import ClickawayJSON
internal import ClickawaySystem
internal import Logging

/// Where `clickawayctl show` draws: surfaces of the display's own, above everything, that
/// take no input and are never counted as windows.
protocol ShowCanvas: AnyObject {
    /// Replaces what is drawn with `picture` on every output it touches.
    func draw(_ picture: ShowPicture)
    /// Takes everything drawn away (the surfaces go).
    func clear()
    /// How many outputs are drawn on now.
    var outputCount: Int { get }
}

/// The daemon's `show` state: which popups to draw until when. Drawn from the engine the
/// decisions use, again after every refresh that changes the picture (a popup opened,
/// closed or moved), never on the press path. Ends on time, on `show --off`, and when a
/// reload leaves none of the popups it draws.
final class ShowDrawing {
    private let display: any Display
    private let logger: Logger
    private var request: ShowRequest?
    /// When the drawing ends.
    let expiry = LoopTimer()
    private var canvas: (any ShowCanvas)?
    private var drawn: ShowPicture?

    init(display: any Display, logger: Logger) {
        self.display = display
        self.logger = logger
    }

    var isShowing: Bool { request != nil }

    /// The `show` request: starts (or replaces) the drawing, or stops it. The reply names the
    /// popups drawn now; the others are drawn when they open.
    func answer(_ show: ShowRequest, engine: DecisionEngine) throws(Refusal) -> JSON {
        if show.off {
            let was = request != nil
            stop(because: "show --off")
            return ShowReply(popups: [], seconds: 0, outputs: 0, stopped: was).json
        }
        let model = engine.model
        for name in show.popups where model.popupIndex(named: name) == nil {
            throw Refusal("no popup named \"\(name)\"" + model.popupNameSuggestion(name))
        }
        // None open yet: the reply says so, and they are drawn as they open.
        let names = Self.drawnPopups(show, Self.engine(for: show, engine))
        if canvas == nil { canvas = try display.makeShowCanvas() }
        request = show
        expiry.deadline = .inMilliseconds(Int64(show.seconds) * 1000)
        drawn = nil
        redraw(engine)
        logger.info("showing the popups on screen", metadata: ["popups": "\(names.joined(separator: ","))", "seconds": "\(show.seconds)"])
        return ShowReply(popups: names, seconds: show.seconds, outputs: canvas?.outputCount ?? 0).json
    }

    /// After every refresh: the picture again if it changed; the end when a reload took
    /// every popup it draws away.
    func update(_ engine: DecisionEngine) {
        guard let show = request else { return }
        let model = engine.model
        if model.popups.isEmpty || (!show.popups.isEmpty && show.popups.allSatisfy({ model.popupIndex(named: $0) == nil })) {
            stop(because: "the configuration has none of the popups it showed")
            return
        }
        redraw(engine)
    }

    /// Whether the time ran out (and the drawing ended).
    func expire(now: Int64) -> Bool {
        guard let deadline = expiry.deadline, deadline.hasPassed(now: now) else { return false }
        stop(because: "its time ran out")
        return true
    }

    func stop(because reason: String) {
        guard request != nil || canvas != nil else { return }
        request = nil
        expiry.deadline = nil
        drawn = nil
        canvas?.clear()
        canvas = nil
        logger.info("no longer showing the popups on screen: \(reason)")
    }

    private func redraw(_ engine: DecisionEngine) {
        guard let show = request, let canvas else { return }
        let drawing = Self.engine(for: show, engine)
        // The holes only where clicks can bypass the daemon: the shield and the overlay.
        let state = display.state
        let holes = state.interception == "x11-grab" || drawing.open.isEmpty ? [] : drawing.holes(in: Self.screen(state.outputs))
        let picture = ShowPicture(drawing, popups: Set(show.popups), holes: holes)
        guard picture != drawn else { return }
        drawn = picture
        canvas.draw(picture)
    }

    /// The outputs' bounding rectangle (the holes are cut from it).
    static func screen(_ outputs: [String: Rect]) -> Rect {
        var e: ShowPicture.Edges?
        for r in outputs.values {
            let q = ShowPicture.Edges(r)
            e = e.map { ShowPicture.Edges(minX: min($0.minX, q.minX), minY: min($0.minY, q.minY), maxX: max($0.maxX, q.maxX), maxY: max($0.maxY, q.maxY)) } ?? q
        }
        return e?.rect ?? Rect(x: 0, y: 0, width: 1 << 15, height: 1 << 15)
    }

    /// The daemon's engine, or with `--all` one with the closed `rect` popups open below it.
    private static func engine(for show: ShowRequest, _ engine: DecisionEngine) -> DecisionEngine {
        guard show.all else { return engine }
        let model = engine.model
        let open = Set(engine.open.map(\.popup))
        var closed: [PopupInstance] = []
        for (i, p) in model.popups.enumerated() where !open.contains(Int32(i)) {
            guard case .rect(let r, let output) = p.source,
                  let rect = ClickModel.screenRect(r, output: output, outputs: engine.outputs) else { continue }
            closed.append(PopupInstance(popup: Int32(i), rect: rect, openedAt: 0, id: .rect(UInt64.max - UInt64(i))))
        }
        guard !closed.isEmpty else { return engine }
        let all = DecisionEngine(model: model, outputs: engine.outputs)
        all.setWindowAreas(engine.windowAreas)
        all.setOpen(closed + engine.open)
        return all
    }

    private static func drawnPopups(_ show: ShowRequest, _ engine: DecisionEngine) -> [String] {
        var names: [String] = []
        for o in engine.open {
            let name = engine.model.popups[Int(o.popup)].name
            if (show.popups.isEmpty || show.popups.contains(name)) && !names.contains(name) { names.append(name) }
        }
        return names
    }
}
